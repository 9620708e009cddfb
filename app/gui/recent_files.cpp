// SPDX-License-Identifier: GPL-3.0-or-later
#include "app/gui/recent_files.h"

#include <QFileInfo>
#include <QSettings>

namespace wl {
namespace {
constexpr int kMaxRecent = 10;
const char* kKey = "recentFiles";
}  // namespace

RecentFiles::RecentFiles(QMenu* menu, QObject* parent) : QObject(parent), menu_(menu) {
  rebuild();
}

QStringList RecentFiles::files() const {
  return QSettings().value(kKey).toStringList();
}

void RecentFiles::add(const QString& path) {
  QStringList list = files();
  const QString abs = QFileInfo(path).absoluteFilePath();
  list.removeAll(abs);
  list.prepend(abs);
  while (list.size() > kMaxRecent)
    list.removeLast();
  QSettings().setValue(kKey, list);
  rebuild();
}

void RecentFiles::rebuild() {
  menu_->clear();
  const QStringList list = files();
  for (int i = 0; i < list.size(); ++i) {
    const QString path = list[i];
    QAction* a =
        menu_->addAction(QStringLiteral("&%1 %2").arg(i + 1).arg(QFileInfo(path).fileName()));
    a->setToolTip(path);
    a->setStatusTip(path);
    connect(a, &QAction::triggered, this, [this, path] { emit openRequested(path); });
  }
  if (list.isEmpty()) {
    menu_->addAction(tr("(no recent runs)"))->setEnabled(false);
  } else {
    menu_->addSeparator();
    connect(menu_->addAction(tr("Clear list")), &QAction::triggered, this, [this] {
      QSettings().remove(kKey);
      rebuild();
    });
  }
}

}  // namespace wl
