// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/viewfile/view_state.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>
#include <QSaveFile>

#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <utility>

#include "loaders/core/error.h"
#include "widgets/export/figure_view.h"

namespace wl {
namespace {

constexpr std::array<std::pair<const char*, YMode>, 4> kYModes = {{
    {"shared-fitted", YMode::SharedFitted},
    {"shared", YMode::SharedPerMetric},
    {"per-track", YMode::PerTrack},
    {"fit-visible", YMode::FitVisible},
}};
constexpr std::array<std::pair<const char*, AlignMode>, 5> kAligns = {{
    {"warp", AlignMode::Warp},
    {"iteration", AlignMode::Iteration},
    {"start", AlignMode::Start},
    {"absolute", AlignMode::Absolute},
    {"event", AlignMode::Event},
}};
constexpr std::array<std::pair<const char*, PairBy>, 3> kPairBys = {{
    {"rank", PairBy::Rank},
    {"slot", PairBy::Slot},
    {"index", PairBy::Index},
}};

template <class T, size_t N>
QString nameOf(const std::array<std::pair<const char*, T>, N>& table, T value) {
  for (const auto& [name, v] : table)
    if (v == value) return QString::fromLatin1(name);
  return {};
}

template <class T, size_t N>
std::optional<T> valueOf(const std::array<std::pair<const char*, T>, N>& table,
                         const QString& name) {
  for (const auto& [n, v] : table)
    if (name == QLatin1String(n)) return v;
  return std::nullopt;
}

template <class T, size_t N>
QString namesOf(const std::array<std::pair<const char*, T>, N>& table) {
  QStringList names;
  for (const auto& [n, v] : table)
    names << QString::fromLatin1(n);
  return names.join(QStringLiteral(", "));
}

// ---- Writing ----

QJsonArray rangeJson(const TimeRange& r) {
  return QJsonArray{static_cast<qint64>(r.t0), static_cast<qint64>(r.t1)};
}

QJsonArray stringsJson(const auto& strings) {
  QJsonArray a;
  for (const auto& s : strings) {
    if constexpr (std::is_same_v<std::decay_t<decltype(s)>, std::string>)
      a.append(QString::fromStdString(s));
    else
      a.append(s);
  }
  return a;
}

QJsonObject tracksJson(const ViewState& v) {
  QStringList shown, hidden;
  for (const auto& [key, on] : v.tracks.shown)
    (on ? shown : hidden) << key;
  QJsonObject order;
  for (const auto& [key, pos] : v.tracks.order)
    order.insert(key, pos);
  QJsonObject t{{"shown", stringsJson(shown)},
                {"hidden", stringsJson(hidden)},
                {"pinned", stringsJson(v.tracks.pinned)},
                {"order", order},
                {"folded", stringsJson(v.folded)},
                {"scroll_px", v.scroll}};
  return t;
}

QJsonObject compareJson(const ViewCompare& c) {
  return QJsonObject{{"a", c.runA},
                     {"b", c.runB},
                     {"align", alignName(c.align)},
                     {"step", static_cast<qint64>(c.step)},
                     {"offset_b_ns", static_cast<qint64>(c.offsetB)},
                     {"pair_by", pairByName(c.pairBy)},
                     {"differences", stringsJson(c.differenceMetrics)},
                     {"layout", compareLayoutName(c.layout)}};
}

// ---- Reading: every access names its JSON path ----

QString typeName(const QJsonValue& v) {
  switch (v.type()) {
    case QJsonValue::Null:
      return QStringLiteral("null");
    case QJsonValue::Bool:
      return QStringLiteral("a boolean");
    case QJsonValue::Double:
      return QStringLiteral("a number");
    case QJsonValue::String:
      return QStringLiteral("a string");
    case QJsonValue::Array:
      return QStringLiteral("an array");
    case QJsonValue::Object:
      return QStringLiteral("an object");
    case QJsonValue::Undefined:
      break;
  }
  return QStringLiteral("nothing");
}

class Reader {
 public:
  explicit Reader(QString source) : source_(std::move(source)) {}

  const QString& source() const { return source_; }
  [[noreturn]] void fail(const QString& path, const QString& what) const {
    throw Error(QStringLiteral("%1: %2: %3").arg(source_, path, what).toStdString());
  }
  [[noreturn]] void expected(const QString& path, const QString& what, const QJsonValue& v) const {
    fail(path, QStringLiteral("expected %1, got %2")
                   .arg(what, v.isUndefined() ? QStringLiteral("no such field") : typeName(v)));
  }

  // A missing field reads as undefined: the typed readers below say "got no such field".
  static QJsonValue field(const QJsonObject& o, const char* key) {
    return o.value(QLatin1String(key));
  }
  QJsonObject object(const QJsonValue& v, const QString& path) {
    if (!v.isObject()) expected(path, QStringLiteral("an object"), v);
    return v.toObject();
  }
  QJsonArray array(const QJsonValue& v, const QString& path) {
    if (!v.isArray()) expected(path, QStringLiteral("an array"), v);
    return v.toArray();
  }
  QString string(const QJsonValue& v, const QString& path) {
    if (!v.isString()) expected(path, QStringLiteral("a string"), v);
    return v.toString();
  }
  bool boolean(const QJsonValue& v, const QString& path) {
    if (!v.isBool()) expected(path, QStringLiteral("true or false"), v);
    return v.toBool();
  }
  // An integer (JSON numbers are doubles: beyond 2^53 they are not exact, and are refused).
  int64_t integer(const QJsonValue& v, const QString& path, int64_t lo = -(int64_t{1} << 53),
                  int64_t hi = int64_t{1} << 53) {
    const double d = v.toDouble(std::nan(""));
    if (!v.isDouble() || !std::isfinite(d) || d != std::floor(d) || d < static_cast<double>(lo) ||
        d > static_cast<double>(hi))
      expected(path, QStringLiteral("an integer from %1 to %2").arg(lo).arg(hi), v);
    return v.toInteger();
  }
  TimeRange range(const QJsonValue& v, const QString& path) {
    const QJsonArray a = array(v, path);
    if (a.size() != 2)
      fail(path, QStringLiteral("expected [start, end] in ns, got %1 values").arg(a.size()));
    const TimeRange r{integer(a[0], path + "[0]"), integer(a[1], path + "[1]")};
    if (r.t1 <= r.t0)
      fail(path, QStringLiteral("expected start < end, got [%1, %2]").arg(r.t0).arg(r.t1));
    return r;
  }
  std::vector<QString> strings(const QJsonValue& v, const QString& path) {
    std::vector<QString> out;
    const QJsonArray a = array(v, path);
    for (qsizetype i = 0; i < a.size(); ++i)
      out.push_back(string(a[i], QStringLiteral("%1[%2]").arg(path).arg(i)));
    return out;
  }
  template <class T, size_t N>
  T named(const std::array<std::pair<const char*, T>, N>& table, const QJsonValue& v,
          const QString& path) {
    const QString name = string(v, path);
    if (auto value = valueOf(table, name)) return *value;
    fail(path, QStringLiteral("expected one of %1, got \"%2\"").arg(namesOf(table), name));
  }

 private:
  QString source_;
};

std::vector<ViewRun> readRuns(Reader& r, const QJsonObject& root) {
  const QJsonArray runs = r.array(r.field(root, "runs"), "$.runs");
  if (runs.isEmpty()) r.fail("$.runs", QStringLiteral("expected at least one run, got none"));
  std::vector<ViewRun> out;
  for (qsizetype i = 0; i < runs.size(); ++i) {
    const QString path = QStringLiteral("$.runs[%1]").arg(i);
    const QJsonObject o = r.object(runs[i], path);
    ViewRun run;
    run.path = r.string(r.field(o, "path"), path + ".path");
    if (run.path.isEmpty()) r.fail(path + ".path", QStringLiteral("expected a file, got \"\""));
    run.hash = r.string(r.field(o, "hash"), path + ".hash");
    if (!run.hash.startsWith(QLatin1String("sha256:")) || run.hash.size() != 7 + 64)
      r.fail(path + ".hash",
             QStringLiteral("expected \"sha256:\" and 64 hex digits, got \"%1\"").arg(run.hash));
    out.push_back(std::move(run));
  }
  return out;
}

void readTracks(Reader& r, const QJsonValue& value, ViewState& v) {
  if (value.isUndefined()) return;
  const QJsonObject t = r.object(value, "$.tracks");
  auto list = [&](const char* key) {
    const QJsonValue f = t.value(QLatin1String(key));
    return f.isUndefined() ? std::vector<QString>{}
                           : r.strings(f, QStringLiteral("$.tracks.") + QLatin1String(key));
  };
  for (const QString& k : list("shown"))
    v.tracks.shown[k] = true;
  for (const QString& k : list("hidden"))
    v.tracks.shown[k] = false;
  for (const QString& k : list("pinned"))
    v.tracks.pinned.insert(k);
  for (const QString& k : list("folded"))
    v.folded.insert(k);
  if (const QJsonValue o = t.value(QLatin1String("order")); !o.isUndefined()) {
    const QJsonObject order = r.object(o, "$.tracks.order");
    for (auto it = order.begin(); it != order.end(); ++it)
      v.tracks.order[it.key()] = static_cast<int>(r.integer(
          it.value(), QStringLiteral("$.tracks.order[\"%1\"]").arg(it.key()), 0, 1'000'000));
  }
  if (const QJsonValue s = t.value(QLatin1String("scroll_px")); !s.isUndefined())
    v.scroll = static_cast<int>(r.integer(s, "$.tracks.scroll_px", 0, 10'000'000));
}

ViewCompare readCompare(Reader& r, const QJsonValue& value, size_t runs) {
  const QString path = QStringLiteral("$.compare");
  const QJsonObject o = r.object(value, path);
  ViewCompare c;
  const auto last = static_cast<int64_t>(runs) - 1;
  c.runA = static_cast<int>(r.integer(r.field(o, "a"), path + ".a", 0, last));
  c.runB = static_cast<int>(r.integer(r.field(o, "b"), path + ".b", 0, last));
  if (c.runA == c.runB)
    r.fail(path + ".b", QStringLiteral("expected a run other than a (%1)").arg(c.runA));
  c.align = r.named(kAligns, r.field(o, "align"), path + ".align");
  if (const QJsonValue s = o.value(QLatin1String("step")); !s.isUndefined())
    c.step = r.integer(s, path + ".step");
  if (const QJsonValue s = o.value(QLatin1String("offset_b_ns")); !s.isUndefined())
    c.offsetB = r.integer(s, path + ".offset_b_ns");
  if (const QJsonValue s = o.value(QLatin1String("pair_by")); !s.isUndefined())
    c.pairBy = r.named(kPairBys, s, path + ".pair_by");
  if (const QJsonValue s = o.value(QLatin1String("differences")); !s.isUndefined())
    for (const QString& id : r.strings(s, path + ".differences"))
      c.differenceMetrics.push_back(id.toStdString());
  if (const QJsonValue s = o.value(QLatin1String("layout")); !s.isUndefined()) {
    const QString name = r.string(s, path + ".layout");
    const auto layout = compareLayoutFromName(name);
    if (!layout)
      r.fail(path + ".layout",
             QStringLiteral("expected paired, overlay or stacked, got \"%1\"").arg(name));
    c.layout = *layout;
  }
  return c;
}

// Each note is the sidecar's note object (analysis/notes.h, read by its reader) with "run".
QJsonArray notesJson(const std::vector<ViewNote>& notes) {
  QJsonArray a;
  for (const ViewNote& n : notes) {
    QJsonObject o =
        QJsonDocument::fromJson(QByteArray::fromStdString(noteToJson(n.note).dump())).object();
    o.insert("run", n.run);
    a.append(o);
  }
  return a;
}

std::vector<ViewNote> readViewNotes(Reader& r, const QJsonValue& value, size_t runs) {
  std::vector<ViewNote> notes;
  if (value.isUndefined() || value.isNull()) return notes;
  const QJsonArray a = r.array(value, "$.notes");
  for (qsizetype i = 0; i < a.size(); ++i) {
    const QString path = QStringLiteral("$.notes[%1]").arg(i);
    const QJsonObject o = r.object(a.at(i), path);
    ViewNote n;
    n.run = static_cast<int>(
        r.integer(r.field(o, "run"), path + ".run", 0, static_cast<int64_t>(runs) - 1));
    const QByteArray text = QJsonDocument(o).toJson(QJsonDocument::Compact);
    n.note = noteFromJson(nlohmann::json::parse(text.toStdString()), r.source().toStdString(),
                          path.toStdString());
    notes.push_back(std::move(n));
  }
  return notes;
}

void readDisplay(Reader& r, const QJsonObject& root, ViewState& v) {
  if (const QJsonValue h = root.value(QLatin1String("heatmap")); !h.isUndefined()) {
    const QJsonObject o = r.object(h, "$.heatmap");
    v.heatmap = r.boolean(r.field(o, "on"), "$.heatmap.on");
    if (const QJsonValue m = o.value(QLatin1String("metric")); !m.isUndefined())
      v.heatmapMetric = r.string(m, "$.heatmap.metric").toStdString();
  }
  if (const QJsonValue y = root.value(QLatin1String("y_axis")); !y.isUndefined()) {
    const QJsonObject o = r.object(y, "$.y_axis");
    if (const QJsonValue m = o.value(QLatin1String("mode")); !m.isUndefined())
      v.yMode = r.named(kYModes, m, "$.y_axis.mode");
    if (const QJsonValue b = o.value(QLatin1String("throttle_bands")); !b.isUndefined())
      v.throttleBands = r.boolean(b, "$.y_axis.throttle_bands");
  }
  if (const QJsonValue t = root.value(QLatin1String("theme")); !t.isUndefined()) {
    v.theme = r.string(t, "$.theme");
    if (v.theme != QLatin1String("system") && v.theme != QLatin1String("light") &&
        v.theme != QLatin1String("dark"))
      r.fail("$.theme", QStringLiteral("expected system, light or dark, got \"%1\"").arg(v.theme));
  }
}

}  // namespace

QString yModeName(YMode mode) {
  return nameOf(kYModes, mode);
}
std::optional<YMode> yModeFromName(const QString& name) {
  return valueOf(kYModes, name);
}
QString alignName(AlignMode mode) {
  return nameOf(kAligns, mode);
}
std::optional<AlignMode> alignFromName(const QString& name) {
  return valueOf(kAligns, name);
}
QString pairByName(PairBy by) {
  return nameOf(kPairBys, by);
}
std::optional<PairBy> pairByFromName(const QString& name) {
  return valueOf(kPairBys, name);
}

QByteArray viewToJson(const ViewState& v, bool compact) {
  QJsonArray runs;
  for (const ViewRun& r : v.runs)
    runs.append(QJsonObject{{"path", r.path}, {"hash", r.hash}});
  QJsonObject root{
      {"format", QString::fromLatin1(kViewFormat)},
      {"version", kViewVersion},
      {"runs", runs},
      {"range_ns", rangeJson(v.range)},
      {"tracks", tracksJson(v)},
      {"heatmap",
       QJsonObject{{"on", v.heatmap}, {"metric", QString::fromStdString(v.heatmapMetric)}}},
      {"y_axis", QJsonObject{{"mode", yModeName(v.yMode)}, {"throttle_bands", v.throttleBands}}},
      {"theme", v.theme}};
  if (v.selection) root.insert("selection_ns", rangeJson(*v.selection));
  if (v.kernel)
    root.insert("kernel", QJsonObject{{"run", v.kernel->run},
                                      {"track", v.kernel->track},
                                      {"event", static_cast<qint64>(v.kernel->event)},
                                      {"start_ns", static_cast<qint64>(v.kernel->start)}});
  if (v.compare) root.insert("compare", compareJson(*v.compare));
  if (!v.notes.empty()) root.insert("notes", notesJson(v.notes));
  return QJsonDocument(root).toJson(compact ? QJsonDocument::Compact : QJsonDocument::Indented);
}

ViewState viewFromJson(const QByteArray& json, const QString& source) {
  Reader r(source);
  QJsonParseError err{};
  const QJsonDocument doc = QJsonDocument::fromJson(json, &err);
  if (err.error != QJsonParseError::NoError)
    throw Error(QStringLiteral("%1: not JSON at byte %2: %3")
                    .arg(source)
                    .arg(err.offset)
                    .arg(err.errorString())
                    .toStdString());
  if (!doc.isObject())
    r.expected("$", QStringLiteral("an object"),
               doc.isArray() ? QJsonValue(doc.array()) : QJsonValue());
  const QJsonObject root = doc.object();
  const QString format = r.string(r.field(root, "format"), "$.format");
  if (format != QLatin1String(kViewFormat))
    r.fail("$.format", QStringLiteral("expected \"%1\" (a Wattline view file), got \"%2\"")
                           .arg(QLatin1String(kViewFormat), format));
  const int64_t version = r.integer(r.field(root, "version"), "$.version", 1, 1'000'000);
  if (version > kViewVersion)
    r.fail("$.version", QStringLiteral("expected version %1, got %2: written by a newer Wattline")
                            .arg(kViewVersion)
                            .arg(version));
  ViewState v;
  v.runs = readRuns(r, root);
  v.range = r.range(r.field(root, "range_ns"), "$.range_ns");
  if (const QJsonValue s = root.value(QLatin1String("selection_ns")); !s.isUndefined())
    v.selection = r.range(s, "$.selection_ns");
  if (const QJsonValue k = root.value(QLatin1String("kernel")); !k.isUndefined()) {
    const QJsonObject o = r.object(k, "$.kernel");
    const auto last = static_cast<int64_t>(v.runs.size()) - 1;
    v.kernel = ViewKernel{
        static_cast<int>(r.integer(r.field(o, "run"), "$.kernel.run", 0, last)),
        static_cast<int>(r.integer(r.field(o, "track"), "$.kernel.track", 0, 1'000'000'000)),
        r.integer(r.field(o, "event"), "$.kernel.event", 0),
        r.integer(r.field(o, "start_ns"), "$.kernel.start_ns")};
  }
  readTracks(r, root.value(QLatin1String("tracks")), v);
  if (const QJsonValue c = root.value(QLatin1String("compare")); !c.isUndefined() && !c.isNull())
    v.compare = readCompare(r, c, v.runs.size());
  readDisplay(r, root, v);
  v.notes = readViewNotes(r, root.value(QLatin1String("notes")), v.runs.size());
  return v;
}

ViewState readViewFile(const QString& path) {
  // A figure drawn from a view carries it (figure_view.h).
  if (path.endsWith(QLatin1String(".png"), Qt::CaseInsensitive) ||
      path.endsWith(QLatin1String(".svg"), Qt::CaseInsensitive) ||
      path.endsWith(QLatin1String(".pdf"), Qt::CaseInsensitive)) {
    const QByteArray json = figureViewJson(path);
    if (json.isEmpty())
      throw Error(QStringLiteral("%1: the figure carries no Wattline view (figures drawn by "
                                 "wattline export --view-file do)")
                      .arg(path)
                      .toStdString());
    return viewFromJson(json, path);
  }
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly))
    throw Error(QStringLiteral("%1: cannot read the view file: %2")
                    .arg(path, f.errorString())
                    .toStdString());
  // A view is a few KiB; anything much larger is not one.
  constexpr qint64 kMaxViewBytes = 16 << 20;
  if (f.size() > kMaxViewBytes)
    throw Error(QStringLiteral("%1: %2 bytes is too large for a view file (at most %3)")
                    .arg(path)
                    .arg(f.size())
                    .arg(kMaxViewBytes)
                    .toStdString());
  return viewFromJson(f.readAll(), path);
}

void writeViewFile(const ViewState& view, const QString& path) {
  QSaveFile f(path);
  if (!f.open(QIODevice::WriteOnly) || f.write(viewToJson(view)) < 0 || !f.commit())
    throw Error(QStringLiteral("%1: cannot write the view file: %2")
                    .arg(path, f.errorString())
                    .toStdString());
}

}  // namespace wl
