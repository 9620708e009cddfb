// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/export/figure_view.h"

#include <QFile>
#include <QImage>
#include <QImageReader>
#include <QSaveFile>

#include <fmt/format.h>

#include "loaders/core/error.h"

namespace wl {
namespace {

QByteArray xmlEscaped(const QByteArray& text) {
  return QString::fromUtf8(text).toHtmlEscaped().toUtf8();
}

QByteArray xmlUnescaped(QByteArray text) {
  return text.replace("&lt;", "<")
      .replace("&gt;", ">")
      .replace("&quot;", "\"")
      .replace("&#39;", "'")
      .replace("&amp;", "&");
}

constexpr const char* kOpen = "<wattline-view xmlns=\"https://wattline.org/view\">";
constexpr const char* kClose = "</wattline-view>";

}  // namespace

void writeFigureWithView(Figure& figure, const FigureOptions& options, const QString& path,
                         const QByteArray& viewJson) {
  if (options.format == FigureFormat::Pdf || viewJson.isEmpty()) {
    writeFigure(figure, options, path);
    return;
  }
  QByteArray bytes;
  if (options.format == FigureFormat::Png) {
    validateFigureSize(options.size);
    QImage img = renderFigureImage(figure, options);
    img.setText(QString::fromLatin1(kFigureViewKey), QString::fromUtf8(viewJson));
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || !img.save(&file, "PNG") || !file.commit())
      throw Error(fmt::format("{}: cannot write: {}", path.toStdString(),
                              file.errorString().toStdString()));
    return;
  }
  bytes = renderFigureBytes(figure, options);
  // After the <svg ...> start tag.
  const qsizetype svg = bytes.indexOf("<svg");
  const qsizetype end = svg < 0 ? -1 : bytes.indexOf('>', svg);
  if (end >= 0)
    bytes.insert(end + 1, QByteArray("\n<metadata>") + kOpen + xmlEscaped(viewJson) + kClose +
                              "</metadata>");
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size() || !file.commit())
    throw Error(
        fmt::format("{}: cannot write: {}", path.toStdString(), file.errorString().toStdString()));
}

QByteArray figureViewJson(const QString& path) {
  if (path.endsWith(QLatin1String(".png"), Qt::CaseInsensitive)) {
    QImageReader reader(path);
    return reader.text(QString::fromLatin1(kFigureViewKey)).toUtf8();
  }
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  const QByteArray bytes = f.read(64 << 20);
  const qsizetype open = bytes.indexOf(kOpen);
  if (open < 0) return {};
  const qsizetype from = open + static_cast<qsizetype>(qstrlen(kOpen));
  const qsizetype close = bytes.indexOf(kClose, from);
  if (close < 0) return {};
  return xmlUnescaped(bytes.mid(from, close - from));
}

}  // namespace wl
