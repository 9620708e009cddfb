// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// Figures and how they are written: the one seam between what is drawn (a timeline, a heatmap,
// analysis charts) and where it goes (PNG, SVG, PDF, the clipboard, a preview thumbnail).
//
// A Figure paints itself into a FigureCanvas: a size in logical pixels (1/96 inch, like CSS
// pixels) and a scale to device pixels. Every device paints the same layout:
//   - PNG: an image of exactly the requested pixels; the painter is scaled by dpi / 96 so fonts
//     and margins keep their physical size, and dense tracks are drawn per device pixel;
//   - SVG: viewBox in logical pixels, width and height in millimetres; text stays text and
//     tracks are compact vector paths (one path per envelope);
//   - PDF: one page of the requested physical size, painted in logical pixels (96 per inch);
//     text stays text (embedded font subsets).
// Sizes are given in pixels, centimetres or inches with a DPI: pixels = length x dpi; the
// physical size is pixels / dpi inches whatever the format.
//
// Files are written through QSaveFile (a temporary file renamed when complete), so a failure
// never leaves half a figure; failures throw wl::Error with one line naming the file.

#include <QByteArray>
#include <QFont>
#include <QImage>
#include <QPainter>
#include <QSizeF>
#include <QString>

#include <optional>

#include "loaders/core/run_model.h"
#include "widgets/timeline/render/axis_ticks.h"
#include "widgets/timeline/render/theme.h"

namespace wl {

enum class FigureFormat { Png, Svg, Pdf };
// "png", "svg", "pdf".
QString figureFormatName(FigureFormat f);
// From a file name's extension (case-insensitive); nullopt if it is none of the three.
std::optional<FigureFormat> figureFormatFromPath(const QString& path);

enum class SizeUnit { Pixels, Centimetres, Inches };
QString sizeUnitName(SizeUnit u);  // "px", "cm", "in"
std::optional<SizeUnit> sizeUnitFromName(const QString& name);

// The size of a figure: width and height in `unit`, and the resolution that turns lengths into
// pixels (and pixels into a physical size).
struct FigureSize {
  double width = 1600;
  double height = 1000;
  SizeUnit unit = SizeUnit::Pixels;
  double dpi = 96;

  // Pixels of a raster export (at least 1 x 1).
  QSize pixels() const;
  // Physical size in inches (pixels / dpi).
  QSizeF inches() const;
  // Layout size in logical pixels (96 per inch).
  QSizeF logical() const;
  // The same size expressed in another unit (the dpi is kept).
  FigureSize in(SizeUnit u) const;
};

enum class FigureTheme { Screen, Publication };
QString figureThemeName(FigureTheme t);  // "screen", "publication"
std::optional<FigureTheme> figureThemeFromName(const QString& name);

struct FigureOptions {
  FigureFormat format = FigureFormat::Png;
  FigureSize size;
  FigureTheme theme = FigureTheme::Publication;
  // The screen theme's colours (light or dark after the application); the publication theme
  // always uses Theme::publication().
  Theme screenTheme = Theme::light();
  bool caption = true;
};

// Limits a figure's size must respect (a typo like --width 1e9 must not allocate gigabytes).
inline constexpr int kMaxFigurePixels = 20000;     // per side, raster
inline constexpr double kMaxFigureInches = 200.0;  // per side, vector

// Throws wl::Error (one line) when the size is not finite, not positive or too large.
void validateFigureSize(const FigureSize& size);

// Where a figure is painted and with what style.
struct FigureCanvas {
  QSizeF size;         // logical pixels
  double scale = 1.0;  // device pixels per logical pixel (raster); 1 for vector devices
  bool vector = false;
  bool publication = true;
  bool caption = true;
  Theme theme = Theme::publication();

  // A font of `points` (1 pt = 1/72 in) as a pixel-size font in logical pixels, so it has the same
  // physical size on every device.
  QFont font(double points, bool bold = false) const;
  // Font sizes of the parts of a figure.
  double textPt() const { return publication ? 9.0 : 8.5; }
  double smallPt() const { return publication ? 8.0 : 7.5; }
  double titlePt() const { return publication ? 11.0 : 10.0; }
  // Width of a hairline that stays visible on every device (logical pixels).
  double hairline() const { return vector ? 0.6 : std::max(0.5, 1.0 / scale); }
};

// The font family figures use: DejaVu Sans where installed (fonts-dejavu-core), else the
// default sans-serif, so exports look the same on every machine that has it.
QString figureFontFamily();

// Something that can paint itself as a figure.
class Figure {
 public:
  virtual ~Figure() = default;

  // Caption: a title (the run name) and a line of details (configuration, range, "simulated").
  QString captionTitle;
  QString captionDetail;

  // The logical size this figure reads best at for a given width (for "auto" heights).
  virtual QSizeF preferredSize(double width) const { return {width, width * 0.6}; }
  // A short name for file names and window titles ("timeline", "summary").
  virtual QString kind() const = 0;

  // Paints background, caption and body.
  void paint(QPainter& p, const FigureCanvas& canvas);

 protected:
  // Paints the figure's content into `body` (logical pixels).
  virtual void paintBody(QPainter& p, const FigureCanvas& canvas, const QRectF& body) = 0;
};

// The canvas of an export with these options.
FigureCanvas figureCanvas(const FigureOptions& options);

// Renders to an image of options.size.pixels() (any format option is ignored).
QImage renderFigureImage(Figure& figure, const FigureOptions& options);
// A thumbnail that fits in `box` pixels with the layout of the full-size figure.
QImage renderFigurePreview(Figure& figure, const FigureOptions& options, QSize box);
// SVG or PDF bytes (or PNG bytes) in memory.
QByteArray renderFigureBytes(Figure& figure, const FigureOptions& options);
// Writes the figure to `path` (format from options.format) through a temporary file.
void writeFigure(Figure& figure, const FigureOptions& options, const QString& path);

// Caption text of a run: title "NAME" and detail "H100 · Llama3-8B · TP 8 · PP 1 · DP 1 · MBS 4 ·
// GBS 32 · seq 8192 · 1 node × 8 GPUs · simulated".
QString runCaptionTitle(const RunInfo& info);
QString runCaptionDetail(const RunInfo& info, size_t gpus);

}  // namespace wl
