// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once
// File > Open Recent: the last runs opened, kept in QSettings.

#include <QMenu>
#include <QObject>
#include <QStringList>

namespace wl {

class RecentFiles : public QObject {
  Q_OBJECT
 public:
  explicit RecentFiles(QMenu* menu, QObject* parent = nullptr);
  void add(const QString& path);
  QStringList files() const;

 signals:
  void openRequested(const QString& path);

 private:
  void rebuild();
  QMenu* menu_;
};

}  // namespace wl
