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
  if (viewJson.isEmpty()) {
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
  if (options.format == FigureFormat::Pdf) {
    validateFigureSize(options.size);
    const QByteArray xmp =
        QByteArray(
            "<?xpacket begin=\"\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>\n"
            "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF "
            "xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\"><rdf:Description "
            "rdf:about=\"\" xmlns:wattline=\"https://wattline.org/view\"><wattline:view>") +
        xmlEscaped(viewJson) +
        "</wattline:view></rdf:Description></rdf:RDF></x:xmpmeta>\n<?xpacket end=\"w\"?>";
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
      throw Error(fmt::format("{}: cannot write: {}", path.toStdString(),
                              file.errorString().toStdString()));
    writePdfWithXmp(&file, figure, options, xmp);
    if (!file.commit())
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
  const bool pdf = path.endsWith(QLatin1String(".pdf"), Qt::CaseInsensitive);
  const char* openTag = pdf ? "<wattline:view>" : kOpen;
  const char* closeTag = pdf ? "</wattline:view>" : kClose;
  const qsizetype open = bytes.indexOf(openTag);
  if (open < 0) return {};
  const qsizetype from = open + static_cast<qsizetype>(qstrlen(openTag));
  const qsizetype close = bytes.indexOf(closeTag, from);
  if (close < 0) return {};
  return xmlUnescaped(bytes.mid(from, close - from));
}

}  // namespace wl
