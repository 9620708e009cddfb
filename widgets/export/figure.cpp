// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/export/figure.h"
#include "widgets/export/figure_view.h"

#include <QBuffer>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFontMetricsF>
#include <QPageSize>
#include <QPdfWriter>
#include <QRegularExpression>
#include <QSaveFile>
#include <QStringList>
#include <QSvgGenerator>

#include <fmt/format.h>

#include <cmath>

#include "loaders/core/error.h"

namespace wl {
namespace {

constexpr double kLogicalDpi = 96.0;
constexpr double kCmPerInch = 2.54;

double inchesPer(SizeUnit u, double dpi) {
  switch (u) {
    case SizeUnit::Pixels:
      return 1.0 / dpi;
    case SizeUnit::Centimetres:
      return 1.0 / kCmPerInch;
    case SizeUnit::Inches:
      return 1.0;
  }
  return 1.0;
}

// Paints the figure on a device of `deviceSize` pixels with the layout of `logical` size.
void paintOn(QPaintDevice* device, Figure& figure, FigureCanvas canvas) {
  QPainter p(device);
  p.setRenderHint(QPainter::Antialiasing, true);
  p.setRenderHint(QPainter::TextAntialiasing, true);
  if (canvas.scale != 1.0) p.scale(canvas.scale, canvas.scale);
  figure.paint(p, canvas);
  p.end();
}

// QSvgGenerator opens a <g> with the whole painter state at every state change, also when
// nothing is drawn before the next one; a chart rendered through QGraphicsScene leaves thousands
// of them (a megabyte for 64 GPUs' bars). Empty groups carry nothing and go.
QByteArray withoutEmptyGroups(const QByteArray& svg) {
  static const QRegularExpression empty(QStringLiteral("<g\\b[^<>]*>\\s*</g>\\s*"));
  QString text = QString::fromUtf8(svg);
  text.remove(empty);
  return text.toUtf8();
}

bool writeSvg(QIODevice* out, Figure& figure, const FigureOptions& options) {
  FigureCanvas canvas = figureCanvas(options);
  QByteArray bytes;
  QBuffer buffer(&bytes);
  buffer.open(QIODevice::WriteOnly);
  QSvgGenerator svg;
  svg.setOutputDevice(&buffer);
  // The viewBox is in logical pixels at 96 per inch, so width and height come out at the
  // physical size of the figure.
  const QSizeF logical = canvas.size;
  svg.setResolution(static_cast<int>(kLogicalDpi));
  svg.setSize(QSize(static_cast<int>(std::ceil(logical.width())),
                    static_cast<int>(std::ceil(logical.height()))));
  svg.setViewBox(QRectF(QPointF(0, 0), logical));
  svg.setTitle(figure.captionTitle.isEmpty() ? figure.kind() : figure.captionTitle);
  svg.setDescription(figure.captionDetail);
  paintOn(&svg, figure, canvas);
  buffer.close();
  const QByteArray compact = withoutEmptyGroups(bytes);
  return out->write(compact) == compact.size();
}

void writePdf(QIODevice* out, Figure& figure, const FigureOptions& options,
              const QByteArray& xmp = {}) {
  FigureCanvas canvas = figureCanvas(options);
  QPdfWriter pdf(out);
  if (!xmp.isEmpty()) pdf.setDocumentXmpMetadata(xmp);  // a figure's view (figure_view.h)
  const QSizeF inches = options.size.inches();
  pdf.setPageSize(QPageSize(QSizeF(inches.width() * 72.0, inches.height() * 72.0), QPageSize::Point,
                            QString(), QPageSize::ExactMatch));
  pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
  pdf.setResolution(static_cast<int>(kLogicalDpi));
  pdf.setTitle(figure.captionTitle.isEmpty() ? figure.kind() : figure.captionTitle);
  pdf.setCreator(QStringLiteral("Wattline"));
  // The painter's device is the page at 96 dots per inch: exactly the logical layout.
  canvas.size = QSizeF(pdf.width(), pdf.height());
  paintOn(&pdf, figure, canvas);
}

}  // namespace

void writePdfWithXmp(QIODevice* out, Figure& figure, const FigureOptions& options,
                     const QByteArray& xmp) {
  writePdf(out, figure, options, xmp);
}

QString figureFormatName(FigureFormat f) {
  switch (f) {
    case FigureFormat::Png:
      return QStringLiteral("png");
    case FigureFormat::Svg:
      return QStringLiteral("svg");
    case FigureFormat::Pdf:
      return QStringLiteral("pdf");
  }
  return {};
}

std::optional<FigureFormat> figureFormatFromPath(const QString& path) {
  const QString ext = QFileInfo(path).suffix().toLower();
  if (ext == QLatin1String("png")) return FigureFormat::Png;
  if (ext == QLatin1String("svg")) return FigureFormat::Svg;
  if (ext == QLatin1String("pdf")) return FigureFormat::Pdf;
  return std::nullopt;
}

QString sizeUnitName(SizeUnit u) {
  switch (u) {
    case SizeUnit::Pixels:
      return QStringLiteral("px");
    case SizeUnit::Centimetres:
      return QStringLiteral("cm");
    case SizeUnit::Inches:
      return QStringLiteral("in");
  }
  return {};
}

std::optional<SizeUnit> sizeUnitFromName(const QString& name) {
  const QString n = name.trimmed().toLower();
  if (n == QLatin1String("px")) return SizeUnit::Pixels;
  if (n == QLatin1String("cm")) return SizeUnit::Centimetres;
  if (n == QLatin1String("in") || n == QLatin1String("inch")) return SizeUnit::Inches;
  return std::nullopt;
}

QSize FigureSize::pixels() const {
  const double k = inchesPer(unit, dpi) * dpi;
  return {std::max(1, static_cast<int>(std::lround(width * k))),
          std::max(1, static_cast<int>(std::lround(height * k)))};
}

QSizeF FigureSize::inches() const {
  const QSize px = pixels();
  return {px.width() / dpi, px.height() / dpi};
}

QSizeF FigureSize::logical() const {
  const QSizeF in = inches();
  return {in.width() * kLogicalDpi, in.height() * kLogicalDpi};
}

FigureSize FigureSize::in(SizeUnit u) const {
  FigureSize s = *this;
  const double k = inchesPer(unit, dpi) / inchesPer(u, dpi);
  s.width = width * k;
  s.height = height * k;
  s.unit = u;
  return s;
}

QString figureThemeName(FigureTheme t) {
  return t == FigureTheme::Screen ? QStringLiteral("screen") : QStringLiteral("publication");
}

std::optional<FigureTheme> figureThemeFromName(const QString& name) {
  const QString n = name.trimmed().toLower();
  if (n == QLatin1String("screen")) return FigureTheme::Screen;
  if (n == QLatin1String("publication") || n == QLatin1String("paper"))
    return FigureTheme::Publication;
  return std::nullopt;
}

void validateFigureSize(const FigureSize& size) {
  if (!std::isfinite(size.width) || !std::isfinite(size.height) || !std::isfinite(size.dpi) ||
      size.width <= 0 || size.height <= 0 || size.dpi <= 0)
    throw Error(fmt::format("figure size {} x {} {} at {} dpi: expected positive numbers",
                            size.width, size.height, sizeUnitName(size.unit).toStdString(),
                            size.dpi));
  if (size.dpi < 10 || size.dpi > 2400)
    throw Error(fmt::format("figure resolution {} dpi: expected 10 to 2400 dpi", size.dpi));
  const double k = inchesPer(size.unit, size.dpi) * size.dpi;
  const double wpx = size.width * k, hpx = size.height * k;
  if (wpx > kMaxFigurePixels || hpx > kMaxFigurePixels || wpx / size.dpi > kMaxFigureInches ||
      hpx / size.dpi > kMaxFigureInches)
    throw Error(
        fmt::format("figure size {:.0f} x {:.0f} pixels: expected at most {} pixels and "
                    "{} inches per side",
                    wpx, hpx, kMaxFigurePixels, kMaxFigureInches));
  if (wpx < 16 || hpx < 16)
    throw Error(
        fmt::format("figure size {:.1f} x {:.1f} pixels: expected at least 16 x 16", wpx, hpx));
}

QString figureFontFamily() {
  static const QString family = [] {
    const QString dejavu = QStringLiteral("DejaVu Sans");
    if (QFontDatabase::families().contains(dejavu)) return dejavu;
    return QFontDatabase::systemFont(QFontDatabase::GeneralFont).family();
  }();
  return family;
}

QFont FigureCanvas::font(double points, bool bold) const {
  QFont f(figureFontFamily());
  f.setPixelSize(std::max(1, static_cast<int>(std::lround(points * kLogicalDpi / 72.0))));
  f.setBold(bold);
  f.setHintingPreference(QFont::PreferNoHinting);
  return f;
}

FigureCanvas figureCanvas(const FigureOptions& options) {
  FigureCanvas c;
  c.size = options.size.logical();
  c.vector = options.format != FigureFormat::Png;
  c.scale = c.vector ? 1.0 : options.size.dpi / kLogicalDpi;
  c.publication = options.theme == FigureTheme::Publication;
  c.theme = c.publication ? Theme::publication() : options.screenTheme;
  c.caption = options.caption;
  return c;
}

void Figure::paint(QPainter& p, const FigureCanvas& canvas) {
  const QRectF all(QPointF(0, 0), canvas.size);
  p.fillRect(all, canvas.theme.background);
  const double margin = 10;
  QRectF body = all.adjusted(margin, margin, -margin, -margin);
  if (canvas.caption && (!captionTitle.isEmpty() || !captionDetail.isEmpty())) {
    const QFont title = canvas.font(canvas.titlePt(), true);
    const QFont detail = canvas.font(canvas.textPt());
    const QFontMetricsF tm(title), dm(detail);
    double y = body.top();
    p.setPen(canvas.theme.text);
    if (!captionTitle.isEmpty()) {
      p.setFont(title);
      p.drawText(QRectF(body.left(), y, body.width(), tm.height()), Qt::AlignLeft | Qt::AlignTop,
                 tm.elidedText(captionTitle, Qt::ElideRight, body.width()));
      y += tm.height() + 1;
    }
    if (!captionDetail.isEmpty()) {
      p.setFont(detail);
      p.setPen(canvas.theme.mutedText);
      p.drawText(QRectF(body.left(), y, body.width(), dm.height()), Qt::AlignLeft | Qt::AlignTop,
                 dm.elidedText(captionDetail, Qt::ElideRight, body.width()));
      y += dm.height();
    }
    body.setTop(y + 8);
  }
  if (body.width() > 4 && body.height() > 4) paintBody(p, canvas, body);
}

QImage renderFigureImage(Figure& figure, const FigureOptions& options) {
  FigureOptions o = options;
  o.format = FigureFormat::Png;
  const QSize px = o.size.pixels();
  QImage img(px, QImage::Format_ARGB32_Premultiplied);
  const double dpm = o.size.dpi / 0.0254;
  img.setDotsPerMeterX(static_cast<int>(std::lround(dpm)));
  img.setDotsPerMeterY(static_cast<int>(std::lround(dpm)));
  FigureCanvas canvas = figureCanvas(o);
  img.fill(canvas.theme.background);
  // Exactly the requested pixels: the logical size is what they hold at this scale.
  canvas.size = QSizeF(px.width() / canvas.scale, px.height() / canvas.scale);
  paintOn(&img, figure, canvas);
  return img;
}

QImage renderFigurePreview(Figure& figure, const FigureOptions& options, QSize box) {
  FigureOptions o = options;
  o.format = FigureFormat::Png;
  FigureCanvas canvas = figureCanvas(o);
  const QSizeF logical = o.size.logical();
  const double k = std::min(box.width() / logical.width(), box.height() / logical.height());
  const QSize px(std::max(1, static_cast<int>(logical.width() * k)),
                 std::max(1, static_cast<int>(logical.height() * k)));
  QImage img(px, QImage::Format_ARGB32_Premultiplied);
  img.fill(canvas.theme.background);
  canvas.scale = k;
  canvas.size = logical;
  paintOn(&img, figure, canvas);
  return img;
}

QByteArray renderFigureBytes(Figure& figure, const FigureOptions& options) {
  validateFigureSize(options.size);
  QByteArray bytes;
  QBuffer buffer(&bytes);
  buffer.open(QIODevice::WriteOnly);
  switch (options.format) {
    case FigureFormat::Png: {
      const QImage img = renderFigureImage(figure, options);
      img.save(&buffer, "PNG");
      break;
    }
    case FigureFormat::Svg:
      writeSvg(&buffer, figure, options);
      break;
    case FigureFormat::Pdf:
      writePdf(&buffer, figure, options);
      break;
  }
  buffer.close();
  return bytes;
}

void writeFigure(Figure& figure, const FigureOptions& options, const QString& path) {
  validateFigureSize(options.size);
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly))
    throw Error(
        fmt::format("{}: cannot write: {}", path.toStdString(), file.errorString().toStdString()));
  bool ok = true;
  switch (options.format) {
    case FigureFormat::Png: {
      const QImage img = renderFigureImage(figure, options);
      ok = img.save(&file, "PNG");
      break;
    }
    case FigureFormat::Svg:
      ok = writeSvg(&file, figure, options);
      break;
    case FigureFormat::Pdf:
      writePdf(&file, figure, options);
      break;
  }
  if (!ok || file.error() != QFileDevice::NoError) {
    const std::string why = file.errorString().toStdString();
    file.cancelWriting();
    throw Error(fmt::format("{}: writing the {} failed: {}", path.toStdString(),
                            figureFormatName(options.format).toUpper().toStdString(), why));
  }
  if (!file.commit())
    throw Error(
        fmt::format("{}: cannot write: {}", path.toStdString(), file.errorString().toStdString()));
}

QString runCaptionTitle(const RunInfo& info) {
  return info.name.empty() ? QObject::tr("(unnamed run)") : QString::fromStdString(info.name);
}

QString runCaptionDetail(const RunInfo& info, size_t gpus) {
  QStringList parts;
  if (!info.platform.empty()) parts << QString::fromStdString(info.platform);
  if (!info.model.empty()) parts << QString::fromStdString(info.model);
  const ParallelConfig& c = info.config;
  auto add = [&](const char* name, const std::optional<int>& v) {
    if (v) parts << QStringLiteral("%1 %2").arg(QLatin1String(name)).arg(*v);
  };
  add("TP", c.tp);
  add("PP", c.pp);
  add("DP", c.dp);
  // Expert, context and virtual-pipeline parallelism only where they are used.
  for (const auto& [name, v] : {std::pair{"EP", c.ep}, {"CP", c.cp}, {"VPP", c.vpp}})
    if (v && *v > 1) add(name, v);
  add("MBS", c.mbs);
  add("GBS", c.gbs);
  add("seq", c.seq_len);
  if (c.recompute) parts << (*c.recompute ? QObject::tr("recompute") : QObject::tr("no recompute"));
  if (c.overlap) parts << (*c.overlap ? QObject::tr("overlap") : QObject::tr("no overlap"));
  if (c.nodes && c.gpus_per_node)
    parts << (*c.nodes == 1
                  ? QObject::tr("1 node × %1 GPUs").arg(*c.gpus_per_node)
                  : QObject::tr("%1 nodes × %2 GPUs").arg(*c.nodes).arg(*c.gpus_per_node));
  else
    parts << QObject::tr("%1 GPUs").arg(gpus);
  if (info.simulated) parts << QObject::tr("simulated");
  return parts.join(QStringLiteral(" · "));
}

}  // namespace wl
