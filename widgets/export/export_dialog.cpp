// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/export/export_dialog.h"

#include <QApplication>
#include <QChartView>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMessageBox>
#include <QMimeData>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include <set>

#include "widgets/export/chart_figure.h"
#include "widgets/export/export_views.h"
#include "widgets/export/figure_view.h"
#include "widgets/export/table_export.h"
#include "widgets/export/timeline_figure.h"
#include "widgets/timeline/view/timeline_page.h"

namespace wl {
namespace {

constexpr QSize kPreviewBox(380, 260);

QString withExtension(const QString& path, FigureFormat f) {
  const QFileInfo info(path);
  const QString base =
      info.suffix().isEmpty() ? path : path.left(path.size() - info.suffix().size() - 1);
  return base + QLatin1Char('.') + figureFormatName(f);
}

int decimalsFor(SizeUnit u) {
  return u == SizeUnit::Pixels ? 0 : 2;
}

QString safeName(QString s) {
  for (QChar& c : s)
    if (!c.isLetterOrNumber() && c != QLatin1Char('-') && c != QLatin1Char('_') &&
        c != QLatin1Char('.'))
      c = QLatin1Char('-');
  return s.isEmpty() ? QStringLiteral("figure") : s;
}

}  // namespace

ExportDialog::ExportDialog(Figure& figure, QWidget* parent)
    : QDialog(parent),
      figure_(figure),
      path_(new QLineEdit(this)),
      format_(new QComboBox(this)),
      width_(new QDoubleSpinBox(this)),
      height_(new QDoubleSpinBox(this)),
      unitBox_(new QComboBox(this)),
      dpi_(new QSpinBox(this)),
      theme_(new QComboBox(this)),
      caption_(new QCheckBox(tr("Caption"), this)),
      captionTitle_(new QLineEdit(this)),
      captionDetail_(new QLineEdit(this)),
      previewLabel_(new QLabel(this)),
      info_(new QLabel(this)),
      previewTimer_(new QTimer(this)) {
  setWindowTitle(tr("Export %1").arg(figure.kind()));
  for (FigureFormat f : {FigureFormat::Png, FigureFormat::Svg, FigureFormat::Pdf})
    format_->addItem(figureFormatName(f).toUpper(), static_cast<int>(f));
  for (SizeUnit u : {SizeUnit::Pixels, SizeUnit::Centimetres, SizeUnit::Inches})
    unitBox_->addItem(sizeUnitName(u), static_cast<int>(u));
  theme_->addItem(tr("Publication (white, black text)"),
                  static_cast<int>(FigureTheme::Publication));
  theme_->addItem(tr("Screen colours"), static_cast<int>(FigureTheme::Screen));
  for (QDoubleSpinBox* s : {width_, height_}) {
    s->setRange(0.01, kMaxFigurePixels);
    s->setDecimals(0);
    s->setKeyboardTracking(false);
  }
  dpi_->setRange(10, 2400);
  dpi_->setValue(96);
  dpi_->setSuffix(tr(" dpi"));
  caption_->setChecked(true);
  captionTitle_->setText(figure.captionTitle);
  captionDetail_->setText(figure.captionDetail);
  previewLabel_->setFixedSize(kPreviewBox);
  previewLabel_->setAlignment(Qt::AlignCenter);
  previewLabel_->setFrameShape(QFrame::StyledPanel);
  previewTimer_->setSingleShot(true);
  previewTimer_->setInterval(150);

  auto* browse = new QPushButton(tr("Browse…"), this);
  auto* fit = new QPushButton(tr("Fit height"), this);
  fit->setToolTip(tr("The height this figure reads best at for the width"));
  auto* pathRow = new QHBoxLayout;
  pathRow->addWidget(path_, 1);
  pathRow->addWidget(format_);
  pathRow->addWidget(browse);
  auto* sizeRow = new QHBoxLayout;
  sizeRow->addWidget(width_);
  sizeRow->addWidget(new QLabel(QStringLiteral("×"), this));
  sizeRow->addWidget(height_);
  sizeRow->addWidget(unitBox_);
  sizeRow->addWidget(dpi_);
  sizeRow->addWidget(fit);
  auto* form = new QFormLayout;
  form->addRow(tr("File"), pathRow);
  form->addRow(tr("Size"), sizeRow);
  form->addRow(QString(), info_);
  form->addRow(tr("Theme"), theme_);
  form->addRow(caption_, captionTitle_);
  form->addRow(QString(), captionDetail_);
  auto* buttons = new QDialogButtonBox(this);
  auto* copy = buttons->addButton(tr("Copy"), QDialogButtonBox::ActionRole);
  copy->setToolTip(tr("Copy the figure to the clipboard (as an image and as SVG)"));
  auto* ok = buttons->addButton(tr("Export"), QDialogButtonBox::AcceptRole);
  buttons->addButton(QDialogButtonBox::Cancel);
  ok->setDefault(true);
  auto* lay = new QVBoxLayout(this);
  lay->addLayout(form);
  lay->addWidget(previewLabel_, 0, Qt::AlignHCenter);
  lay->addWidget(buttons);

  setFigureSize(FigureSize{});
  fitHeight();

  connect(path_, &QLineEdit::textEdited, this, [this](const QString& p) {
    if (const auto f = figureFormatFromPath(p)) {
      const QSignalBlocker b(format_);
      format_->setCurrentIndex(format_->findData(static_cast<int>(*f)));
      schedulePreview();
    }
  });
  connect(format_, &QComboBox::currentIndexChanged, this, [this] {
    if (!path_->text().isEmpty()) path_->setText(withExtension(path_->text(), format()));
    schedulePreview();
  });
  connect(unitBox_, &QComboBox::currentIndexChanged, this,
          [this] { setSizeUnit(static_cast<SizeUnit>(unitBox_->currentData().toInt())); });
  for (QDoubleSpinBox* s : {width_, height_})
    connect(s, &QDoubleSpinBox::valueChanged, this, [this] { schedulePreview(); });
  connect(dpi_, &QSpinBox::valueChanged, this, [this] { schedulePreview(); });
  connect(theme_, &QComboBox::currentIndexChanged, this, [this] { schedulePreview(); });
  connect(caption_, &QCheckBox::toggled, this, [this](bool on) {
    captionTitle_->setEnabled(on);
    captionDetail_->setEnabled(on);
    schedulePreview();
  });
  connect(captionTitle_, &QLineEdit::textChanged, this, [this] { schedulePreview(); });
  connect(captionDetail_, &QLineEdit::textChanged, this, [this] { schedulePreview(); });
  connect(previewTimer_, &QTimer::timeout, this, &ExportDialog::renderPreview);
  connect(browse, &QPushButton::clicked, this, &ExportDialog::browse);
  connect(fit, &QPushButton::clicked, this, &ExportDialog::fitHeight);
  connect(copy, &QPushButton::clicked, this, &ExportDialog::copyToClipboard);
  connect(ok, &QPushButton::clicked, this, [this] {
    if (exportNow()) accept();
  });
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  schedulePreview();
}

ExportDialog::~ExportDialog() = default;

void ExportDialog::setPath(const QString& path) {
  path_->setText(path);
  if (const auto f = figureFormatFromPath(path)) {
    const QSignalBlocker b(format_);
    format_->setCurrentIndex(format_->findData(static_cast<int>(*f)));
  }
  schedulePreview();
}

QString ExportDialog::path() const {
  return path_->text();
}

void ExportDialog::setFormat(FigureFormat f) {
  format_->setCurrentIndex(format_->findData(static_cast<int>(f)));
}

FigureFormat ExportDialog::format() const {
  return static_cast<FigureFormat>(format_->currentData().toInt());
}

void ExportDialog::setFigureSize(const FigureSize& size) {
  unit_ = size.unit;
  {
    const QSignalBlocker b(unitBox_);
    unitBox_->setCurrentIndex(unitBox_->findData(static_cast<int>(size.unit)));
  }
  const QSignalBlocker bw(width_), bh(height_), bd(dpi_);
  for (QDoubleSpinBox* s : {width_, height_})
    s->setDecimals(decimalsFor(size.unit));
  dpi_->setValue(static_cast<int>(std::lround(size.dpi)));
  width_->setValue(size.width);
  height_->setValue(size.height);
  schedulePreview();
}

FigureSize ExportDialog::figureSize() const {
  return FigureSize{width_->value(), height_->value(), unit_, static_cast<double>(dpi_->value())};
}

void ExportDialog::setSizeUnit(SizeUnit unit) {
  if (unit == unit_) return;
  setFigureSize(figureSize().in(unit));
}

void ExportDialog::setTheme(FigureTheme t) {
  theme_->setCurrentIndex(theme_->findData(static_cast<int>(t)));
}

FigureTheme ExportDialog::theme() const {
  return static_cast<FigureTheme>(theme_->currentData().toInt());
}

void ExportDialog::setScreenTheme(const Theme& theme) {
  screenTheme_ = theme;
  schedulePreview();
}

void ExportDialog::setCaptionShown(bool shown) {
  caption_->setChecked(shown);
}

bool ExportDialog::captionShown() const {
  return caption_->isChecked();
}

void ExportDialog::setCaption(const QString& title, const QString& detail) {
  captionTitle_->setText(title);
  captionDetail_->setText(detail);
}

void ExportDialog::fitHeight() {
  const FigureSize s = figureSize();
  const double logicalW = s.logical().width();
  const double logicalH = figure_.preferredSize(logicalW).height();
  FigureSize fitted = s;
  fitted.height = logicalW > 0 ? s.width * logicalH / logicalW : s.height;
  setFigureSize(fitted);
}

FigureOptions ExportDialog::options() const {
  FigureOptions o;
  o.format = format();
  o.size = figureSize();
  o.theme = theme();
  o.screenTheme = screenTheme_;
  o.caption = captionShown();
  return o;
}

void ExportDialog::schedulePreview() {
  previewStale_ = true;
  updateInfo();
  previewTimer_->start();
}

void ExportDialog::updateInfo() {
  const FigureSize s = figureSize();
  const QSize px = s.pixels();
  const QSizeF in = s.inches();
  info_->setText(tr("%1 × %2 px at %3 dpi · %4 × %5 cm")
                     .arg(px.width())
                     .arg(px.height())
                     .arg(s.dpi)
                     .arg(in.width() * 2.54, 0, 'f', 1)
                     .arg(in.height() * 2.54, 0, 'f', 1));
}

void ExportDialog::renderPreview() {
  previewStale_ = false;
  figure_.captionTitle = captionTitle_->text();
  figure_.captionDetail = captionDetail_->text();
  FigureOptions o = options();
  try {
    validateFigureSize(o.size);
    preview_ = renderFigurePreview(figure_, o, kPreviewBox);
    previewLabel_->setPixmap(QPixmap::fromImage(preview_));
  } catch (const std::exception& e) {
    preview_ = QImage();
    previewLabel_->setText(QString::fromUtf8(e.what()));
  }
}

QImage ExportDialog::preview() {
  if (previewStale_) renderPreview();
  return preview_;
}

bool ExportDialog::exportNow(bool quiet) {
  lastError_.clear();
  figure_.captionTitle = captionTitle_->text();
  figure_.captionDetail = captionDetail_->text();
  QString p = path_->text().trimmed();
  if (p.isEmpty()) {
    lastError_ = tr("Choose a file to export to.");
  } else {
    if (!figureFormatFromPath(p)) p = withExtension(p, format());
    try {
      QApplication::setOverrideCursor(Qt::WaitCursor);
      writeFigureWithView(figure_, options(), p,
                          view_ ? view_(QFileInfo(p).absolutePath()) : QByteArray());
      QApplication::restoreOverrideCursor();
      path_->setText(p);
      emit exported(p);
      return true;
    } catch (const std::exception& e) {
      QApplication::restoreOverrideCursor();
      lastError_ = QString::fromUtf8(e.what());
    }
  }
  if (!quiet) QMessageBox::warning(this, tr("Export"), lastError_);
  return false;
}

void ExportDialog::copyToClipboard() {
  figure_.captionTitle = captionTitle_->text();
  figure_.captionDetail = captionDetail_->text();
  try {
    wl::copyToClipboard(figure_, options());
  } catch (const std::exception& e) {
    lastError_ = QString::fromUtf8(e.what());
    QMessageBox::warning(this, tr("Copy"), lastError_);
  }
}

void ExportDialog::browse() {
  const QString filters = tr("PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf)");
  QString selected = format() == FigureFormat::Svg   ? tr("SVG drawing (*.svg)")
                     : format() == FigureFormat::Pdf ? tr("PDF document (*.pdf)")
                                                     : tr("PNG image (*.png)");
  const QString p =
      QFileDialog::getSaveFileName(this, tr("Export figure"), path_->text(), filters, &selected);
  if (!p.isEmpty()) setPath(figureFormatFromPath(p) ? p : withExtension(p, format()));
}

std::unique_ptr<TimelineFigure> timelineFigure(const TimelinePage& page, bool onlyRowsOnScreen) {
  TimelineView* view = page.view();
  const std::vector<TrackRow>& all = view->rows();
  TimelineFigureSpec spec;
  if (onlyRowsOnScreen) {
    std::set<const TrackRow*> seen;
    const int h = view->viewport()->height();
    for (int y = 0; y < h;) {
      QRectF rect;
      const TrackRow* r = view->rowAt(QPoint(1, y), &rect);
      if (r && seen.insert(r).second) spec.rows.push_back(*r);
      y = r ? std::max(y + 1, static_cast<int>(std::ceil(rect.bottom()))) : y + 1;
    }
  } else {
    std::set<QString> folded;
    for (const TrackRow& r : all)
      if (r.isHeader() && view->isCollapsed(r.key)) folded.insert(r.key);
    for (size_t i : unfoldedRows(all, folded))
      spec.rows.push_back(all[i]);
  }
  spec.range = page.viewport()->range();
  TileStore& store = *page.store();
  spec.origin = store.runs().empty() ? spec.range.t0 : store.run(0).info().start_ns;
  spec.yMode = view->renderer().style().yMode;
  spec.throttleTint = view->renderer().style().throttleTint;
  spec.notes = view->notes();
  const RunDisplays& displays = view->renderer().displays();
  for (size_t i = 0; i < store.runs().size(); ++i)
    if (auto tv = displays.sharedThrottleView(static_cast<int>(i)))
      spec.throttleViews[static_cast<int>(i)] = std::move(tv);
  // A comparison exports as the screen aligns it (warp or shift) and names the runs alike.
  for (size_t i = 0; i < store.runs().size(); ++i) {
    const int run = static_cast<int>(i);
    spec.runWarps.emplace_back(run, displays.runWarp(run));
    if (!displays.runLabel(run).isEmpty()) spec.runLabels.emplace_back(run, displays.runLabel(run));
  }
  auto fig = std::make_unique<TimelineFigure>(store, std::move(spec));
  if (store.runs().size() == 1) {
    const RunFile& run = store.run(0);
    fig->captionTitle = runCaptionTitle(run.info());
    fig->captionDetail = runCaptionDetail(run.info(), run.gpus().size());
    const QString r = rangeCaption(run.info(), page.viewport()->range());
    if (!r.isEmpty()) fig->captionDetail += QStringLiteral(" · ") + r;
  } else {
    QStringList names;
    for (const auto& run : store.runs())
      names << runCaptionTitle(run->info());
    fig->captionTitle = names.join(QStringLiteral(" vs "));
  }
  return fig;
}

namespace {

bool runExportDialog(QWidget* parent, Figure& figure, const QString& baseName,
                     const Theme& screenTheme, FigureViewSource view = {}) {
  QSettings settings;
  ExportDialog dialog(figure, parent);
  dialog.setViewSource(std::move(view));
  const QString dir = settings.value(QStringLiteral("export/dir"), QDir::homePath()).toString();
  const auto format = static_cast<FigureFormat>(
      settings.value(QStringLiteral("export/format"), static_cast<int>(FigureFormat::Png)).toInt());
  FigureSize size;
  size.unit = static_cast<SizeUnit>(
      settings.value(QStringLiteral("export/unit"), static_cast<int>(SizeUnit::Pixels)).toInt());
  size.dpi = settings.value(QStringLiteral("export/dpi"), 96.0).toDouble();
  size.width = settings.value(QStringLiteral("export/width"), 1600.0).toDouble();
  size.height = settings.value(QStringLiteral("export/height"), 1000.0).toDouble();
  if (!(size.width > 0) || !(size.dpi > 0)) size = FigureSize{};
  dialog.setFigureSize(size);
  dialog.fitHeight();
  dialog.setTheme(static_cast<FigureTheme>(
      settings.value(QStringLiteral("export/theme"), static_cast<int>(FigureTheme::Publication))
          .toInt()));
  dialog.setScreenTheme(screenTheme);
  const QString name = safeName(baseName.isEmpty() ? figure.kind() : baseName);
  dialog.setPath(QDir(dir).filePath(name + QLatin1Char('.') + figureFormatName(format)));
  if (dialog.exec() != QDialog::Accepted) return false;
  const FigureOptions o = dialog.options();
  settings.setValue(QStringLiteral("export/dir"), QFileInfo(dialog.path()).absolutePath());
  settings.setValue(QStringLiteral("export/format"), static_cast<int>(o.format));
  settings.setValue(QStringLiteral("export/unit"), static_cast<int>(o.size.unit));
  settings.setValue(QStringLiteral("export/dpi"), o.size.dpi);
  settings.setValue(QStringLiteral("export/width"), o.size.width);
  settings.setValue(QStringLiteral("export/height"), o.size.height);
  settings.setValue(QStringLiteral("export/theme"), static_cast<int>(o.theme));
  return true;
}

}  // namespace

bool exportFigure(QWidget* parent, Figure& figure, const QString& baseName) {
  return runExportDialog(
      parent, figure, baseName,
      Theme::fromPalette(parent ? parent->palette() : QGuiApplication::palette()));
}

bool exportTimeline(QWidget* parent, const TimelinePage& page, FigureViewSource view) {
  if (page.store()->runs().empty()) return false;
  const auto fig = timelineFigure(page, true);
  const QString base = QStringLiteral("%1-%2").arg(fig->captionTitle, fig->kind());
  // The screen theme is the timeline's own (it may differ from the window's palette).
  return runExportDialog(parent ? parent : page.window(), *fig, base,
                         page.view()->renderer().style().theme, std::move(view));
}

bool exportChart(QWidget* parent, QChart* chart, const QString& captionTitle,
                 const QString& captionDetail) {
  if (!chart) return false;
  auto fig = ChartFigure::borrow(chart, QStringLiteral("chart"));
  fig->captionTitle = captionTitle;
  fig->captionDetail = captionDetail;
  const QString title = chart->title().isEmpty() ? QStringLiteral("chart") : chart->title();
  return exportFigure(parent, *fig, title);
}

void copyToClipboard(Figure& figure, const FigureOptions& options) {
  FigureOptions png = options;
  png.format = FigureFormat::Png;
  FigureOptions svg = options;
  svg.format = FigureFormat::Svg;
  auto* mime = new QMimeData;
  mime->setImageData(renderFigureImage(figure, png));
  mime->setData(QStringLiteral("image/svg+xml"), renderFigureBytes(figure, svg));
  QGuiApplication::clipboard()->setMimeData(mime);
}

bool exportTableDialog(QWidget* parent, const QAbstractItemModel* model, const QString& baseName) {
  if (!model) return false;
  QSettings settings;
  const QString dir = settings.value(QStringLiteral("export/dir"), QDir::homePath()).toString();
  QString selected = QObject::tr("CSV (*.csv)");
  const QString p = QFileDialog::getSaveFileName(
      parent, QObject::tr("Export table"),
      QDir(dir).filePath(safeName(baseName.isEmpty() ? QStringLiteral("table") : baseName) +
                         QStringLiteral(".csv")),
      QObject::tr("CSV (*.csv);;JSON (*.json)"), &selected);
  if (p.isEmpty()) return false;
  QString path = p;
  if (!tableFormatFromPath(path))
    path +=
        selected.contains(QLatin1String("json")) ? QStringLiteral(".json") : QStringLiteral(".csv");
  try {
    exportTable(model, path);
  } catch (const std::exception& e) {
    QMessageBox::warning(parent, QObject::tr("Export table"), QString::fromUtf8(e.what()));
    return false;
  }
  settings.setValue(QStringLiteral("export/dir"), QFileInfo(path).absolutePath());
  return true;
}

void installChartExportMenu(QChartView* view,
                            std::function<std::pair<QString, QString>()> caption) {
  view->setContextMenuPolicy(Qt::CustomContextMenu);
  QObject::connect(
      view, &QWidget::customContextMenuRequested, view, [view, caption](const QPoint& pos) {
        QChart* chart = view->chart();
        if (!chart) return;
        const auto [title, detail] = caption ? caption() : std::pair<QString, QString>{};
        QMenu menu(view);
        menu.addAction(QObject::tr("Export chart…"), view,
                       [=] { exportChart(view->window(), chart, title, detail); });
        menu.addAction(QObject::tr("Copy chart"), view, [=] {
          auto fig = ChartFigure::borrow(chart, QStringLiteral("chart"));
          fig->captionTitle = title;
          fig->captionDetail = detail;
          FigureOptions o;
          o.size = FigureSize{static_cast<double>(view->width()),
                              static_cast<double>(view->height()), SizeUnit::Pixels, 96};
          o.caption = !title.isEmpty();
          copyToClipboard(*fig, o);
        });
        menu.exec(view->mapToGlobal(pos));
      });
}

void installTableExportMenu(QTableView* view, const QString& baseName) {
  view->setContextMenuPolicy(Qt::CustomContextMenu);
  QObject::connect(
      view, &QWidget::customContextMenuRequested, view, [view, baseName](const QPoint& pos) {
        QMenu menu(view);
        menu.addAction(QObject::tr("Export table as CSV or JSON…"), view,
                       [=] { exportTableDialog(view->window(), view->model(), baseName); });
        menu.addAction(QObject::tr("Copy table as CSV"), view, [=] {
          if (view->model())
            QGuiApplication::clipboard()->setText(QString::fromUtf8(tableToCsv(*view->model())));
        });
        menu.exec(view->viewport()->mapToGlobal(pos));
      });
}

}  // namespace wl
