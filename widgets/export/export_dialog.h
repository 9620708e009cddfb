// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// File > Export and the "Export…" entries of context menus: a dialog that writes a figure as PNG,
// SVG or PDF, and the small functions the main window calls.
//
// The dialog shows the file (its extension and the format box follow each other), the size in
// px, cm or in with a DPI (changing the unit keeps the physical size), the theme (screen colours
// or publication: white background, black text), the caption (on/off, editable title and
// details), a live preview thumbnail painted with the same layout as the file, Copy (the figure
// as an image, and as SVG for applications that take it) and Export.
//
// Everything the controls do is also a public method, so tests drive the dialog without file
// pickers.

#include <QDialog>
#include <QImage>

#include <functional>
#include <memory>

#include "widgets/export/figure.h"

class QAbstractItemModel;
class QChart;
class QChartView;
class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QSpinBox;
class QTableView;
class QTimer;

namespace wl {

class TimelinePage;
class TimelineFigure;

// The view a figure is drawn from, as JSON with its run paths relative to the folder the figure
// is written to (figure_view.h: the file carries it); empty for none.
using FigureViewSource = std::function<QByteArray(const QString& figureFolder)>;

class ExportDialog : public QDialog {
  Q_OBJECT
 public:
  // The figure must outlive the dialog.
  explicit ExportDialog(Figure& figure, QWidget* parent = nullptr);
  ~ExportDialog() override;

  void setPath(const QString& path);  // also sets the format when the extension names one
  QString path() const;
  void setFormat(FigureFormat format);  // also changes the path's extension
  FigureFormat format() const;
  void setFigureSize(const FigureSize& size);
  FigureSize figureSize() const;
  // Converts the shown width and height to another unit (the physical size stays).
  void setSizeUnit(SizeUnit unit);
  void setTheme(FigureTheme theme);
  FigureTheme theme() const;
  // The colours of the screen theme (the timeline's current theme).
  void setScreenTheme(const Theme& theme);
  void setCaptionShown(bool shown);
  bool captionShown() const;
  void setCaption(const QString& title, const QString& detail);
  // The exported file carries this view (File > Export Timeline: the window's).
  void setViewSource(FigureViewSource view) { view_ = std::move(view); }
  // Height for the current width from the figure's preferred aspect.
  void fitHeight();

  FigureOptions options() const;
  // The thumbnail as last rendered (renders now if it is out of date).
  QImage preview();

  // Writes the file; on failure returns false and lastError() says why (the dialog also shows it
  // in a message box unless `quiet`).
  bool exportNow(bool quiet = false);
  void copyToClipboard();
  QString lastError() const { return lastError_; }

 signals:
  void exported(const QString& path);

 private:
  void schedulePreview();
  void renderPreview();
  void updateInfo();
  void browse();

  Figure& figure_;
  FigureViewSource view_;
  Theme screenTheme_ = Theme::light();
  SizeUnit unit_ = SizeUnit::Pixels;
  bool previewStale_ = true;
  QImage preview_;
  QString lastError_;
  QLineEdit* path_;
  QComboBox* format_;
  QDoubleSpinBox* width_;
  QDoubleSpinBox* height_;
  QComboBox* unitBox_;
  QSpinBox* dpi_;
  QComboBox* theme_;
  QCheckBox* caption_;
  QLineEdit* captionTitle_;
  QLineEdit* captionDetail_;
  QLabel* previewLabel_;
  QLabel* info_;
  QTimer* previewTimer_;
};

// The figure of what the timeline shows: its visible range and, when onlyRowsOnScreen, the rows
// scrolled into view (else every row not folded away), with its y-axis mode; the caption names
// the run(s) and the range. Draws from the page's TileStore (loading what is missing).
std::unique_ptr<TimelineFigure> timelineFigure(const TimelinePage& page, bool onlyRowsOnScreen);

// Shows the export dialog for a figure; true when a file was written. Remembers the last folder,
// format, size, DPI and theme (QSettings "export/*").
bool exportFigure(QWidget* parent, Figure& figure, const QString& baseName = {});
// File > Export with the timeline page current: exactly what is on screen.
// With `view`, the file carries the view it shows (reopened by File > Open, export --view-file).
bool exportTimeline(QWidget* parent, const TimelinePage& page, FigureViewSource view = {});
// "Export chart…" on an analysis chart (the chart stays owned by its view and is restored).
bool exportChart(QWidget* parent, QChart* chart, const QString& captionTitle = {},
                 const QString& captionDetail = {});
// The figure as an image (and as SVG) on the clipboard.
void copyToClipboard(Figure& figure, const FigureOptions& options);
// "Export table…": asks for a .csv or .json file and writes the table; true when written.
bool exportTableDialog(QWidget* parent, const QAbstractItemModel* model,
                       const QString& baseName = {});

// Context menus with "Export chart…" and "Copy chart" on a chart view; `caption` gives the
// caption title and detail at the time of the export (may be empty).
void installChartExportMenu(QChartView* view,
                            std::function<std::pair<QString, QString>()> caption = {});
// Context menu with "Export table as CSV or JSON…" and "Copy table as CSV" on a table view.
void installTableExportMenu(QTableView* view, const QString& baseName);

}  // namespace wl
