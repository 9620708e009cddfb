// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/viewfile/view_runs.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>

#include "loaders/core/error.h"

namespace wl {

QString runContentHash(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly))
    throw Error(
        QStringLiteral("%1: cannot read the run: %2").arg(path, f.errorString()).toStdString());
  constexpr qint64 kMiB = 1 << 20;
  const qint64 size = f.size();
  QCryptographicHash h(QCryptographicHash::Sha256);
  h.addData(QByteArray::number(size) + '\n');
  h.addData(f.read(std::min(size, kMiB)));
  if (size > kMiB) {
    // The last MiB, or what follows the first when the file is shorter than 2 MiB.
    const qint64 tail = std::max(kMiB, size - kMiB);
    if (!f.seek(tail))
      throw Error(
          QStringLiteral("%1: cannot read the run: %2").arg(path, f.errorString()).toStdString());
    h.addData(f.read(size - tail));
  }
  return QStringLiteral("sha256:") + QString::fromLatin1(h.result().toHex());
}

QString viewRunPath(const QString& runPath, const QString& baseDir) {
  const QString abs = QFileInfo(runPath).absoluteFilePath();
  if (baseDir.isEmpty()) return QDir::cleanPath(abs);
  return QDir::cleanPath(QDir(baseDir).relativeFilePath(abs));
}

std::vector<ResolvedRun> resolveViewRuns(const ViewState& view, const QString& baseDir) {
  std::vector<ResolvedRun> out;
  const QDir base(baseDir.isEmpty() ? QDir::currentPath() : baseDir);
  for (size_t i = 0; i < view.runs.size(); ++i) {
    ResolvedRun r;
    r.index = static_cast<int>(i);
    r.jsonPath = QStringLiteral("$.runs[%1].path").arg(i);
    r.stored = view.runs[i].path;
    r.path = QDir::cleanPath(base.absoluteFilePath(r.stored));
    if (!QFileInfo(r.path).isFile()) {
      r.status = ResolvedRun::Status::Missing;
    } else {
      try {
        r.actualHash = runContentHash(r.path);
      } catch (const Error&) {
        r.status = ResolvedRun::Status::Missing;
      }
      if (r.status == ResolvedRun::Status::Found && r.actualHash != view.runs[i].hash)
        r.status = ResolvedRun::Status::HashDiffers;
    }
    out.push_back(std::move(r));
  }
  return out;
}

QString resolveProblem(const ResolvedRun& run, const QString& viewSource) {
  switch (run.status) {
    case ResolvedRun::Status::Found:
      return {};
    case ResolvedRun::Status::Missing:
      return QStringLiteral("%1: %2: run \"%3\" not found (looked for %4)")
          .arg(viewSource, run.jsonPath, run.stored, run.path);
    case ResolvedRun::Status::HashDiffers:
      return QStringLiteral(
                 "%1: %2: run %3 is not the run the view was saved with (its content "
                 "hash differs: the file was changed or replaced)")
          .arg(viewSource, run.jsonPath, run.path);
  }
  return {};
}

}  // namespace wl
