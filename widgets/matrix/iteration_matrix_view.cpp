// SPDX-License-Identifier: GPL-3.0-or-later
#include "widgets/matrix/iteration_matrix_view.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>

namespace wl {

// The matrix itself: lays it out for its size, caches the cell image per size, theme and matrix,
// and turns mouse and keys into the view's hover and activation.
class MatrixCanvas : public QWidget {
 public:
  explicit MatrixCanvas(IterationMatrixView* view) : QWidget(view), view_(view) {
    setMouseTracking(true);
    setFocusPolicy(Qt::StrongFocus);
    setMinimumSize(160, 120);
  }
  MatrixFonts fonts() const {
    MatrixFonts f;
    f.text = font();
    f.small = font();
    f.small.setPointSizeF(std::max(6.0, font().pointSizeF() * 0.85));
    return f;
  }
  MatrixLayout layout() const {
    return layoutMatrix(view_->matrix_, QRectF(rect()).adjusted(6, 6, -6, -4), fonts());
  }
  void invalidate() {
    image_ = {};
    update();
  }

 protected:
  void paintEvent(QPaintEvent*) override {
    QPainter p(this);
    const Theme& th = view_->theme_;
    p.fillRect(rect(), th.background);
    const IterationMatrix& m = view_->matrix_;
    if (m.empty()) return;
    const MatrixLayout l = layout();
    const double dpr = devicePixelRatioF();
    const QSize px(std::max(1, qRound(l.cells.width() * dpr)),
                   std::max(1, qRound(l.cells.height() * dpr)));
    if (image_.size() != px) image_ = matrixImage(m, px, th);
    paintMatrix(p, l, m, th, fonts(), dpr, &image_);
    p.setBrush(Qt::NoBrush);
    if (view_->selected_) {  // the cell last clicked: a solid outline
      const QRectF c = matrixCellRect(l, m, view_->selected_->first, view_->selected_->second);
      p.setPen(QPen(th.text, 2));
      p.drawRect(c.adjusted(-1, -1, 1, 1));
    }
    if (view_->hover_ && view_->hover_ != view_->selected_) {
      const QRectF c = matrixCellRect(l, m, view_->hover_->first, view_->hover_->second);
      p.setPen(QPen(th.cursor, 1.5));
      p.drawRect(c.adjusted(-1, -1, 1, 1));
    }
  }
  void mouseMoveEvent(QMouseEvent* e) override {
    const auto cell = matrixCellAt(layout(), view_->matrix_, e->position());
    view_->hover(cell);
    if (cell)
      QToolTip::showText(e->globalPosition().toPoint(), view_->hoverText(), this);
    else
      QToolTip::hideText();
  }
  void leaveEvent(QEvent*) override { view_->hover(view_->selected_); }
  void mouseReleaseEvent(QMouseEvent* e) override {
    if (e->button() != Qt::LeftButton) return;
    if (const auto cell = matrixCellAt(layout(), view_->matrix_, e->position()))
      view_->activate(cell->first, cell->second);
  }
  void keyPressEvent(QKeyEvent* e) override {
    const IterationMatrix& m = view_->matrix_;
    if (m.empty()) return QWidget::keyPressEvent(e);
    auto cell = view_->hover_.value_or(std::make_pair<size_t, size_t>(0, 0));
    switch (e->key()) {
      case Qt::Key_Left:
        cell.second = cell.second > 0 ? cell.second - 1 : 0;
        break;
      case Qt::Key_Right:
        cell.second = std::min(cell.second + 1, m.cols() - 1);
        break;
      case Qt::Key_Up:
        cell.first = cell.first > 0 ? cell.first - 1 : 0;
        break;
      case Qt::Key_Down:
        cell.first = std::min(cell.first + 1, m.rows() - 1);
        break;
      case Qt::Key_Return:
      case Qt::Key_Enter:
        if (view_->hover_) view_->activate(cell.first, cell.second);
        return;
      default:
        return QWidget::keyPressEvent(e);
    }
    view_->hover(cell);
  }
  void resizeEvent(QResizeEvent*) override { image_ = {}; }

 private:
  IterationMatrixView* view_;
  QImage image_;
};

IterationMatrixView::IterationMatrixView(QWidget* parent)
    : QWidget(parent),
      picker_(new QComboBox(this)),
      status_(new QLabel(this)),
      cellLine_(new QLabel(this)),
      canvas_(new MatrixCanvas(this)) {
  picker_->addItem(tr("Cost of throttling, per GPU"), static_cast<int>(MatrixMeasure::Cost));
  picker_->addItem(tr("Lateness into the last collective, per rank"),
                   static_cast<int>(MatrixMeasure::Lateness));
  picker_->setToolTip(
      tr("Cost: the seconds each GPU's throttling added to each step after the collectives and "
         "slack (the numbers of `wattline explain`). Lateness: how long after the earliest rank "
         "each rank reached the step's last collective (traced steps only)."));
  connect(picker_, &QComboBox::currentIndexChanged, this,
          [this](int i) { setMeasure(static_cast<MatrixMeasure>(picker_->itemData(i).toInt())); });
  status_->setWordWrap(true);
  cellLine_->setWordWrap(true);
  cellLine_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  cellLine_->setMinimumHeight(cellLine_->fontMetrics().height() * 3);
  cellLine_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  auto* top = new QHBoxLayout;
  top->addWidget(new QLabel(tr("Colour by:"), this));
  top->addWidget(picker_, 1);
  auto* box = new QVBoxLayout(this);
  box->setContentsMargins(4, 4, 4, 4);
  box->addLayout(top);
  box->addWidget(status_);
  box->addWidget(canvas_, 1);
  box->addWidget(cellLine_);
  rebuild();
}

QWidget* IterationMatrixView::canvas() const {
  return canvas_;
}

void IterationMatrixView::setCost(std::shared_ptr<const ThrottleCost> cost,
                                  std::vector<RankInfo> ranks) {
  cost_ = std::move(cost);
  ranks_ = std::move(ranks);
  busy_ = false;
  rebuild();
}

void IterationMatrixView::setBusy(bool busy) {
  busy_ = busy;
  rebuild();
}

void IterationMatrixView::setTheme(const Theme& theme) {
  theme_ = theme;
  canvas_->invalidate();
}

void IterationMatrixView::setMeasure(MatrixMeasure m) {
  const int i = picker_->findData(static_cast<int>(m));
  if (picker_->currentIndex() != i) picker_->setCurrentIndex(i);  // comes back here
  if (matrix_.measure == m && cost_) return;
  matrix_.measure = m;
  rebuild();
}

void IterationMatrixView::rebuild() {
  const MatrixMeasure m = matrix_.measure;
  matrix_ = cost_ ? buildIterationMatrix(*cost_, ranks_, m) : IterationMatrix{};
  matrix_.measure = m;
  hover_.reset();
  selected_.reset();
  cellLine_->clear();
  if (busy_) {
    status_->setText(tr("Analysing…"));
  } else if (!cost_) {
    status_->setText(
        tr("Open a run: its steps appear here once the Analysis dock has analysed it."));
  } else if (!cost_->unknown.empty()) {
    status_->setText(
        tr("The cost of throttling is unknown: %1.").arg(QString::fromStdString(cost_->unknown)));
  } else {
    const auto plural = [](size_t n, const QString& one, const QString& many) {
      return (n == 1 ? one : many).arg(n);
    };
    const QString rows = m == MatrixMeasure::Cost
                             ? plural(matrix_.rows(), tr("%1 GPU"), tr("%1 GPUs"))
                             : plural(matrix_.rows(), tr("%1 rank"), tr("%1 ranks"));
    const QString traced =
        cost_->traced_iterations == 0
            ? tr("no step traced")
            : tr("steps %1 traced").arg(QString::fromStdString(cost_->tracedSteps()));
    status_->setText(
        tr("%1 × %2, %3. Hover a cell for its numbers; click to see it on the timeline.")
            .arg(rows, plural(matrix_.cols(), tr("%1 step"), tr("%1 steps")), traced));
  }
  canvas_->invalidate();
}

void IterationMatrixView::hover(std::optional<std::pair<size_t, size_t>> cell) {
  if (hover_ == cell) return;
  hover_ = cell;
  cellLine_->setText(hoverText());
  canvas_->update();
}

QString IterationMatrixView::hoverText() const {
  if (!hover_ || !cost_) return {};
  QStringList lines;
  for (const std::string& s : matrixCellText(matrix_, *cost_, hover_->first, hover_->second))
    lines << QString::fromStdString(s);
  return lines.join(QLatin1Char('\n'));
}

QRectF IterationMatrixView::cellRect(size_t row, size_t col) const {
  return matrixCellRect(canvas_->layout(), matrix_, row, col);
}

void IterationMatrixView::activate(size_t row, size_t col) {
  if (row >= matrix_.rows() || col >= matrix_.cols()) return;
  selected_ = std::make_pair(row, col);
  hover(selected_);
  canvas_->update();
  const MatrixColumn& c = matrix_.columns[col];
  emit cellActivated(matrix_.gpuOf[row], matrix_.rankOf[row], c.start_ns, c.end_ns);
}

}  // namespace wl
