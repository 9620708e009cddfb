// SPDX-License-Identifier: GPL-3.0-or-later
#include "loaders/sim/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>

#include "loaders/core/throttle_reasons.h"
#include "loaders/sim/clock_governor.h"
#include "loaders/sim/power_model.h"
#include "loaders/sim/rng.h"
#include "loaders/sim/schedule_1f1b.h"
#include "loaders/sim/thermal_model.h"

namespace wl::sim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct ProgramOp {
  OpKind kind = OpKind::HostGap;
  int microbatch = -1;
  P2PExchange p2p;
  const OpCost* cost = nullptr;
  std::array<int, kCommScopes> seqBase{};
};

struct StageProgram {
  std::vector<ProgramOp> ops;
  std::array<int, kCommScopes> perIteration{};
};

enum class Status { NotStarted, Ready, HostGap, Running, Waiting, Finished };

struct LinkBytes {
  double linkTx = 0, linkRx = 0, netTx = 0, netRx = 0, hostRx = 0;
  void add(const LinkBytes& o, double share) {
    linkTx += o.linkTx * share, linkRx += o.linkRx * share, netTx += o.netTx * share;
    netRx += o.netRx * share, hostRx += o.hostRx * share;
  }
};

// A transfer running from t0 to t1 (bytes move at a constant rate).
struct Flow {
  double t0 = 0, t1 = 0;
  LinkBytes bytes;
};

// What one op moves per member: symmetric collectives send and receive their bytes; a pipeline
// exchange sends and receives one message per direction it carries.
LinkBytes opBytes(const OpCost& c, const P2PExchange* p2p = nullptr) {
  LinkBytes b;
  const double tx = p2p ? (p2p->sendActivation ? 1.0 : 0.0) + (p2p->sendGrad ? 1.0 : 0.0) : 1.0;
  const double rx = p2p ? (p2p->recvActivation ? 1.0 : 0.0) + (p2p->recvGrad ? 1.0 : 0.0) : 1.0;
  b.linkTx = c.linkBytes * tx, b.linkRx = c.linkBytes * rx;
  b.netTx = c.netBytes * tx, b.netRx = c.netBytes * rx;
  b.hostRx = c.hostBytes;
  return b;
}

struct UnitState {
  int stage = 0, block = 0;
  std::vector<int> members;
  bool traced = false;
  size_t op = 0;
  int iteration = 0;
  Status status = Status::NotStarted;
  double iterStart = 0;
  // Running phase.
  const OpCost* cost = nullptr;
  double p = 0, segStart = 0, phaseStart = 0, D = 0;
  std::vector<double> factor, expertFactor;
  std::vector<double> histS;
  std::vector<float> histMhz;
  bool expandThis = false;
  // Waiting in a communication op.
  double waitStart = 0;
  // Overlapped gradient reduction running beside the compute stream.
  double bgSpinStart = -1, bgActiveStart = -1, bgActiveEnd = -1;
  // Rendezvous memberships.
  int dpRv = -1, dpSlot = -1, embRv = -1, embSlot = -1, normRv = -1, normSlot = -1;
  // Bytes every member has sent and received so far (collectives are symmetric): over NVLink or
  // xGMI, over the network, and host input over PCIe; transfers still running are flows.
  LinkBytes done;
  std::vector<Flow> flows;
};

struct Rendezvous {
  std::vector<int> units;
  int arrived = 0;
  double maxArrival = 0;
  int posted = 0;
  double maxPost = 0;
  double dataDone = 0;
  std::vector<double> arrivalOf, postOf;
};

struct Link {
  int pendingSide = -1;  // 0: the lower stage posted, 1: the higher
};

struct Event {
  double t;
  uint64_t seq;
  int unit;
  bool phaseEnd;
  bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

class Engine {
 public:
  explicit Engine(const EngineSetup& s);
  EngineResult run(const Progress& progress);

 private:
  void buildPrograms();
  void buildUnits();
  void push(double t, int u, bool phaseEnd) { events_.push({t, seq_++, u, phaseEnd}); }
  void account(int g, double t);
  void accountUnit(int u, double t);
  void setLevel(int u, double level, bool busy);
  void advance(int u, double t);
  void startPhase(int u, double t, const ProgramOp& op);
  void refreshPhase(int u, double t);
  void endPhase(int u, double t);
  // The traced kernels of unit u's current phase, laid out to end at endS; those after cutS (the
  // simulation stopped inside the phase) are not emitted and those running then end there.
  void expandPhase(int u, double endS, double cutS = std::numeric_limits<double>::infinity());
  void resume(int u, double t);
  void postP2P(int u, double t, const ProgramOp& op);
  void arrive(int u, double t, const ProgramOp& op);
  void postDp(int u, double t);
  void finishIteration(int u, double t);
  void physicsStep(double t0, double t1);
  void recordTruth(double t0, double t1);
  void addFlow(int u, double t0, double t1, const LinkBytes& b);
  void updateCounters(double t);
  void closeTruth(int g, double t);

  const SimConfig& c_;
  const Topology& topo_;
  const WorkModel& work_;
  StringTable& names_;
  TelemetryRecorder& recorder_;
  KernelSink& sink_;
  KernelExpander expander_;
  std::function<bool(int)> traceStep_;
  SimObserver* observer_;
  const PlatformProfile& P_;

  std::vector<StageProgram> programs_;
  std::vector<UnitState> units_;
  std::vector<Rendezvous> rendezvous_;
  std::vector<Link> links_;  // (stage, block) for stage < pp - 1
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  uint64_t seq_ = 0;
  int finished_ = 0;
  double lastFinish_ = 0;
  bool stopped_ = false;
  double stepEnd_ = 0;

  // Per GPU.
  int n_;
  std::vector<double> level_, accAct_, accBusy_, lastT_;
  std::vector<uint8_t> busyFlag_;
  std::vector<double> energy_, power_, activity_, busy_;
  std::vector<double> clocksNow_, freeNow_;  // applied and unthrottled clock of the current step
  std::vector<uint32_t> bindingNow_;         // the limit that bound the current step's clock
  // Ground truth being accumulated: the open interval of every GPU.
  std::vector<uint32_t> lastBinding_;  // the last limit that bound, while the clock recovers
  std::vector<ThrottleTruth> openTruth_;
  // Byte counters of every GPU (cumulative), for the recorder.
  std::vector<double> linkTx_, linkRx_, netTx_, netRx_, pcieTx_, pcieRx_;
  std::unique_ptr<PowerModel> power_model_;
  std::unique_ptr<ThermalModel> thermal_;
  std::unique_ptr<ClockGovernor> governor_;

  EngineResult result_;
  uint32_t nameForward_, nameBackward_, nameOptimizer_;
};

Engine::Engine(const EngineSetup& s)
    : c_(*s.config),
      topo_(*s.topology),
      work_(*s.work),
      names_(*s.names),
      recorder_(*s.recorder),
      sink_(*s.kernels),
      expander_(*s.kernels),
      traceStep_(s.traceStep),
      observer_(s.observer),
      P_(s.config->platform),
      n_(s.topology->world()) {
  const auto n = static_cast<size_t>(n_);
  level_.assign(n, 0.0);
  accAct_.assign(n, 0.0);
  accBusy_.assign(n, 0.0);
  lastT_.assign(n, 0.0);
  busyFlag_.assign(n, 0);
  energy_.assign(n, 0.0);
  power_.assign(n, 0.0);
  activity_.assign(n, 0.0);
  busy_.assign(n, 0.0);
  lastBinding_.assign(n, 0);
  for (auto* v : {&linkTx_, &linkRx_, &netTx_, &netRx_, &pcieTx_, &pcieRx_})
    v->assign(n, 0.0);
  openTruth_.assign(n, ThrottleTruth{});
  for (ThrottleTruth& t : openTruth_)
    t.busy_s = t.deficit_mhz_s = t.unthrottled_mhz = 0;

  // Part-to-part variation and per-node inlet offsets.
  std::vector<double> leak(n), resistance(n);
  for (int g = 0; g < n_; ++g) {
    Rng r = Rng::keyed(c_.seed, RandomPurpose::GpuVariation, static_cast<uint64_t>(g));
    leak[static_cast<size_t>(g)] = std::max(0.5, 1.0 + P_.leak_spread * r.normal());
    resistance[static_cast<size_t>(g)] =
        std::max(0.7, 1.0 + P_.thermal_resistance_spread * r.normal());
  }
  ThermalSite site = c_.thermalSite();
  site.nodeOffsetC.resize(static_cast<size_t>(c_.nodes));
  for (int nd = 0; nd < c_.nodes; ++nd) {
    Rng r = Rng::keyed(c_.seed, RandomPurpose::NodeInlet, static_cast<uint64_t>(nd));
    site.nodeOffsetC[static_cast<size_t>(nd)] = P_.node_inlet_spread_c * r.normal();
  }
  power_model_ = std::make_unique<PowerModel>(P_, leak);
  thermal_ = std::make_unique<ThermalModel>(P_, topo_, site, c_.physicsStepS, resistance);
  governor_ =
      std::make_unique<ClockGovernor>(P_, topo_, *power_model_, c_.powerLimit(), c_.physicsStepS);
  if (c_.noThrottle || !c_.unthrottledGpus.empty()) {
    std::vector<uint8_t> unlimited(static_cast<size_t>(topo_.world()), c_.noThrottle ? 1 : 0);
    for (int g : c_.unthrottledGpus)
      unlimited[static_cast<size_t>(g)] = 1;
    governor_->setUnlimited(std::move(unlimited));
  }
  governor_->startIdle();
  clocksNow_ = governor_->clocks();
  freeNow_ = governor_->unthrottledClocks();
  bindingNow_.assign(n, 0);
  // Idle equilibrium: idle power depends on the temperature through the leakage, the temperature
  // on the power; a few rounds settle both.
  for (int round = 0; round < 4; ++round) {
    for (int g = 0; g < n_; ++g)
      power_[static_cast<size_t>(g)] = power_model_->power(
          g, P_.idle_sm_clock_mhz,
          round == 0 ? c_.inletTempC : thermal_->dieTemp()[static_cast<size_t>(g)], 0.0);
    thermal_->settle(power_);
  }

  nameForward_ = names_.intern("forward");
  nameBackward_ = names_.intern("backward");
  nameOptimizer_ = names_.intern("optimizer");
  buildPrograms();
  buildUnits();
}

void Engine::buildPrograms() {
  const bool dpReduce = c_.workload != Workload::Inference &&
                        ((c_.dp > 1 && !c_.fsdp) || (c_.model.moe() && c_.dp / c_.ep > 1));
  for (int s = 0; s < c_.pp; ++s) {
    ScheduleOptions o;
    o.stage = s;
    o.stages = c_.pp;
    o.microbatches = c_.microbatches();
    o.dpReduce = dpReduce;
    o.overlapDp = c_.overlap;
    o.embeddingSync = c_.model.tied_embeddings && c_.pp > 1;
    o.gradNorm = c_.tp * c_.pp > 1;
    o.forwardOnly = c_.workload == Workload::Inference;
    o.paramGather = dpReduce && c_.distributedOptimizer;
    const StageWork& w = work_.stage(s);
    StageProgram prog;
    for (const ScheduleOp& so : oneF1BIteration(o)) {
      ProgramOp op;
      op.kind = so.kind;
      op.microbatch = so.microbatch;
      op.p2p = so.p2p;
      switch (so.kind) {
        case OpKind::HostGap:
          break;
        case OpKind::ZeroGrad:
          op.cost = &w.zeroGrad;
          break;
        case OpKind::Forward:
          op.cost = &w.forward;
          break;
        case OpKind::Backward:
          op.cost = &w.backward;
          break;
        case OpKind::P2P:
          op.cost = so.p2p.link < 0 ? &w.p2pPrev : &w.p2pNext;
          break;
        case OpKind::DpReduce:
          op.cost = &w.dpReduce;
          break;
        case OpKind::DpPost:
          op.cost = &w.dpMain;
          break;
        case OpKind::DpWait:
          op.cost = &w.dpTail;
          break;
        case OpKind::EmbeddingSync:
          op.cost = &w.embeddingSync;
          break;
        case OpKind::GradNormLocal:
          op.cost = &w.gradNormLocal;
          break;
        case OpKind::GradNorm:
          op.cost = &w.gradNorm;
          break;
        case OpKind::Optimizer:
          op.cost = &w.optimizer;
          break;
        case OpKind::ParamGather:
          op.cost = &w.paramGather;
          break;
      }
      op.seqBase = prog.perIteration;
      if (op.cost)
        for (int k = 0; k < kCommScopes; ++k)
          prog.perIteration[static_cast<size_t>(k)] += op.cost->scopeCount[static_cast<size_t>(k)];
      prog.ops.push_back(op);
    }
    programs_.push_back(std::move(prog));
  }
}

void Engine::buildUnits() {
  const int perStage = topo_.unitsPerStage();
  for (const Unit& u : topo_.units()) {
    UnitState s;
    s.stage = u.stage;
    s.block = u.block;
    s.members = u.members;
    for (int r : u.members)
      s.traced = s.traced || sink_.traced(r);
    s.factor.assign(u.members.size(), 1.0);
    s.expertFactor.assign(u.members.size(), 1.0);
    units_.push_back(std::move(s));
  }
  auto addRv = [&](std::vector<int> members, int UnitState::*rv, int UnitState::*slot) {
    Rendezvous r;
    r.units = std::move(members);
    r.arrivalOf.assign(r.units.size(), 0.0);
    r.postOf.assign(r.units.size(), 0.0);
    for (size_t i = 0; i < r.units.size(); ++i) {
      units_[static_cast<size_t>(r.units[i])].*rv = static_cast<int>(rendezvous_.size());
      units_[static_cast<size_t>(r.units[i])].*slot = static_cast<int>(i);
    }
    rendezvous_.push_back(std::move(r));
  };
  for (int s = 0; s < c_.pp; ++s) {
    std::vector<int> m;
    for (int b = 0; b < perStage; ++b)
      m.push_back(topo_.unitAt(s, b));
    addRv(std::move(m), &UnitState::dpRv, &UnitState::dpSlot);
  }
  for (int b = 0; b < perStage; ++b) {
    if (c_.model.tied_embeddings && c_.pp > 1)
      addRv({topo_.unitAt(0, b), topo_.unitAt(c_.pp - 1, b)}, &UnitState::embRv,
            &UnitState::embSlot);
    std::vector<int> m;
    for (int s = 0; s < c_.pp; ++s)
      m.push_back(topo_.unitAt(s, b));
    addRv(std::move(m), &UnitState::normRv, &UnitState::normSlot);
  }
  links_.assign(static_cast<size_t>(std::max(0, c_.pp - 1) * perStage), Link{});
}

void Engine::account(int g, double t) {
  const auto i = static_cast<size_t>(g);
  const double from = lastT_[i];
  if (t <= from) return;
  const double dt = t - from;
  double act = level_[i] * dt;
  double busy = busyFlag_[i] ? dt : 0.0;
  const UnitState& u = units_[static_cast<size_t>(topo_.unitOf(g))];
  if (u.bgSpinStart >= 0) {
    auto overlap = [&](double a, double b) {
      return std::max(0.0, std::min(t, b) - std::max(from, a));
    };
    const double spinEnd = u.bgActiveStart >= 0 ? u.bgActiveStart : kInf;
    const double spin = overlap(u.bgSpinStart, spinEnd);
    const double active = u.bgActiveStart >= 0 ? overlap(u.bgActiveStart, u.bgActiveEnd) : 0.0;
    act += spin * P_.activity_comm_wait + active * P_.activity_comm;
    if (!busyFlag_[i]) busy += spin + active;
  }
  accAct_[i] += act;
  accBusy_[i] += std::min(busy, dt);
  lastT_[i] = t;
}

void Engine::accountUnit(int u, double t) {
  for (int g : units_[static_cast<size_t>(u)].members)
    account(g, t);
}

void Engine::setLevel(int u, double level, bool busy) {
  for (int g : units_[static_cast<size_t>(u)].members) {
    level_[static_cast<size_t>(g)] = level;
    busyFlag_[static_cast<size_t>(g)] = busy ? 1 : 0;
  }
}

void Engine::refreshPhase(int u, double t) {
  UnitState& s = units_[static_cast<size_t>(u)];
  const OpCost& c = *s.cost;
  // The overlapped gradient reduction, while it moves data, runs NCCL kernels on SMs the backward
  // pass would have used.
  const bool contended = s.bgActiveStart >= 0 && t >= s.bgActiveStart && t < s.bgActiveEnd;
  const double fmax =
      P_.max_sm_clock_mhz * (contended ? 1.0 / (1.0 + P_.overlap_sm_slowdown) : 1.0);
  const double dense = c.smS - c.expertSmS;
  double slowest = 0;
  for (size_t m = 0; m < s.members.size(); ++m) {
    const double work = (dense + c.expertSmS * s.expertFactor[m]) * s.factor[m];
    slowest = std::max(slowest, work * fmax / clocksNow_[static_cast<size_t>(s.members[m])]);
  }
  s.D = slowest + c.fixedS + c.commS;
  if (s.D <= 0) s.D = 1e-9;
  const double aSm = c.smActivity(), aFixed = c.fixedActivity();
  for (size_t m = 0; m < s.members.size(); ++m) {
    const int g = s.members[m];
    account(g, t);
    const double work = (dense + c.expertSmS * s.expertFactor[m]) * s.factor[m];
    const double sm = work * fmax / clocksNow_[static_cast<size_t>(g)];
    const double wait = std::max(0.0, s.D - sm - c.fixedS - c.commS);
    level_[static_cast<size_t>(g)] = (sm * aSm + c.fixedS * aFixed + c.commS * P_.activity_comm +
                                      wait * P_.activity_comm_wait + c.hiddenS * P_.activity_comm) /
                                     s.D;
    busyFlag_[static_cast<size_t>(g)] = 1;
  }
  if (s.expandThis) {
    s.histS.push_back(t);
    for (int g : s.members)
      s.histMhz.push_back(static_cast<float>(clocksNow_[static_cast<size_t>(g)]));
  }
}

void Engine::startPhase(int u, double t, const ProgramOp& op) {
  UnitState& s = units_[static_cast<size_t>(u)];
  s.status = Status::Running;
  s.cost = op.cost;
  s.p = 0;
  s.segStart = t;
  s.phaseStart = t;
  s.expandThis = s.traced && traceStep_(s.iteration);
  s.histS.clear();
  s.histMhz.clear();
  // Per-member jitter of the compute time and, for MoE, of the expert load.
  Rng r = Rng::keyed(c_.seed, RandomPurpose::PhaseJitter, static_cast<uint64_t>(u),
                     static_cast<uint64_t>(s.iteration), s.op);
  for (size_t m = 0; m < s.members.size(); ++m) {
    s.factor[m] =
        1.0 + std::clamp(c_.phaseJitter * r.normal(), -4 * c_.phaseJitter, 4 * c_.phaseJitter);
    s.expertFactor[m] =
        op.cost->expertSmS > 0 ? std::max(0.5, 1.0 + c_.expertImbalance * r.normal()) : 1.0;
  }
  refreshPhase(u, t);
  const double end = t + s.D;
  if (end < stepEnd_) push(end, u, true);
}

void Engine::expandPhase(int u, double endS, double cutS) {
  UnitState& s = units_[static_cast<size_t>(u)];
  const ProgramOp& op = programs_[static_cast<size_t>(s.stage)].ops[s.op];
  PhaseLayout l;
  l.cost = s.cost;
  l.startS = s.phaseStart;
  l.endS = endS;
  l.cutS = cutS;
  l.members = &s.members;
  l.factor = &s.factor;
  l.expertFactor = &s.expertFactor;
  l.historyS = &s.histS;
  l.historyMhz = &s.histMhz;
  l.maxClockMhz = P_.max_sm_clock_mhz;
  l.iteration = s.iteration;
  l.seqBase = &op.seqBase;
  l.perIteration = &programs_[static_cast<size_t>(s.stage)].perIteration;
  l.seed = c_.seed;
  l.unit = static_cast<uint64_t>(u);
  l.op = s.op;
  expander_.expandPhase(l);
}

void Engine::endPhase(int u, double t) {
  UnitState& s = units_[static_cast<size_t>(u)];
  const ProgramOp& op = programs_[static_cast<size_t>(s.stage)].ops[s.op];
  accountUnit(u, t);
  if (s.expandThis) {
    expandPhase(u, t);
    const uint32_t name = op.kind == OpKind::Forward     ? nameForward_
                          : op.kind == OpKind::Backward  ? nameBackward_
                          : op.kind == OpKind::Optimizer ? nameOptimizer_
                                                         : 0;
    if (name)
      for (int r : s.members)
        if (sink_.traced(r)) sink_.annotate(r, s.phaseStart, t, name);
  }
  s.done.add(opBytes(*s.cost), 1.0);
  setLevel(u, 0.0, false);
  s.status = Status::Ready;
  ++s.op;
  advance(u, t);
}

void Engine::resume(int u, double t) {
  UnitState& s = units_[static_cast<size_t>(u)];
  const ProgramOp& op = programs_[static_cast<size_t>(s.stage)].ops[s.op];
  accountUnit(u, t);
  if (op.kind != OpKind::HostGap && op.cost && s.traced && traceStep_(s.iteration))
    expander_.expandComm(*op.cost, s.members, s.waitStart, t, clocksNow_, s.iteration, op.seqBase,
                         programs_[static_cast<size_t>(s.stage)].perIteration);
  setLevel(u, 0.0, false);
  s.status = Status::Ready;
  ++s.op;
  advance(u, t);
}

void Engine::postP2P(int u, double t, const ProgramOp& op) {
  UnitState& s = units_[static_cast<size_t>(u)];
  const int perStage = topo_.unitsPerStage();
  const int lowStage = op.p2p.link < 0 ? s.stage - 1 : s.stage;
  const int side = op.p2p.link < 0 ? 1 : 0;
  Link& link = links_[static_cast<size_t>(lowStage * perStage + s.block)];
  accountUnit(u, t);
  s.status = Status::Waiting;
  s.waitStart = t;
  if (link.pendingSide == 1 - side) {
    const int peer = topo_.unitAt(side == 1 ? lowStage : lowStage + 1, s.block);
    const double done = t + op.cost->commS;
    accountUnit(peer, t);
    setLevel(u, P_.activity_comm, true);
    setLevel(peer, P_.activity_comm, true);
    if (c_.linkCounters) {
      const UnitState& ps = units_[static_cast<size_t>(peer)];
      const ProgramOp& pop = programs_[static_cast<size_t>(ps.stage)].ops[ps.op];
      addFlow(u, t, done, opBytes(*op.cost, &op.p2p));
      addFlow(peer, t, done, opBytes(*pop.cost, &pop.p2p));
    }
    push(done, u, false);
    push(done, peer, false);
    link.pendingSide = -1;
  } else {
    link.pendingSide = side;
    setLevel(u, P_.activity_comm_wait, true);
  }
}

void Engine::arrive(int u, double t, const ProgramOp& op) {
  UnitState& s = units_[static_cast<size_t>(u)];
  int rvIndex = -1, slot = -1;
  switch (op.kind) {
    case OpKind::DpReduce:
    case OpKind::DpWait:
    case OpKind::ParamGather:
      rvIndex = s.dpRv, slot = s.dpSlot;
      break;
    case OpKind::EmbeddingSync:
      rvIndex = s.embRv, slot = s.embSlot;
      break;
    default:
      rvIndex = s.normRv, slot = s.normSlot;
  }
  Rendezvous& rv = rendezvous_[static_cast<size_t>(rvIndex)];
  accountUnit(u, t);
  s.status = Status::Waiting;
  s.waitStart = t;
  rv.arrivalOf[static_cast<size_t>(slot)] = t;
  rv.maxArrival = rv.arrived == 0 ? t : std::max(rv.maxArrival, t);
  ++rv.arrived;
  setLevel(u, op.kind == OpKind::DpWait ? 0.0 : P_.activity_comm_wait, true);
  if (rv.arrived < static_cast<int>(rv.units.size())) return;
  double done = rv.maxArrival + op.cost->commS;
  if (op.kind == OpKind::DpWait) done = std::max(rv.dataDone, done);
  for (int w : rv.units) {
    accountUnit(w, t);
    setLevel(w, P_.activity_comm, true);
    push(done, w, false);
    if (c_.linkCounters) {
      const UnitState& ws = units_[static_cast<size_t>(w)];
      addFlow(w, t, done, opBytes(*programs_[static_cast<size_t>(ws.stage)].ops[ws.op].cost));
    }
  }
  rv.arrived = 0;
}

void Engine::postDp(int u, double t) {
  UnitState& s = units_[static_cast<size_t>(u)];
  Rendezvous& rv = rendezvous_[static_cast<size_t>(s.dpRv)];
  const ProgramOp& op = programs_[static_cast<size_t>(s.stage)].ops[s.op];
  accountUnit(u, t);
  s.bgSpinStart = t;
  s.bgActiveStart = s.bgActiveEnd = -1;
  rv.postOf[static_cast<size_t>(s.dpSlot)] = t;
  rv.maxPost = rv.posted == 0 ? t : std::max(rv.maxPost, t);
  if (++rv.posted < static_cast<int>(rv.units.size())) return;
  rv.dataDone = rv.maxPost + op.cost->commS;
  for (size_t i = 0; i < rv.units.size(); ++i) {
    const int w = rv.units[i];
    UnitState& ws = units_[static_cast<size_t>(w)];
    accountUnit(w, t);
    ws.bgActiveStart = t;
    ws.bgActiveEnd = rv.dataDone;
    if (c_.linkCounters) addFlow(w, t, rv.dataDone, opBytes(*op.cost));
    if (ws.traced && traceStep_(ws.iteration))
      expander_.expandComm(*op.cost, ws.members, rv.postOf[i], rv.dataDone, clocksNow_,
                           ws.iteration, op.seqBase,
                           programs_[static_cast<size_t>(ws.stage)].perIteration);
  }
  rv.posted = 0;
}

void Engine::finishIteration(int u, double t) {
  UnitState& s = units_[static_cast<size_t>(u)];
  for (int r : s.members)
    result_.iterations.push_back({r, s.iteration, llround(s.iterStart * 1e9), llround(t * 1e9)});
  ++s.iteration;
  s.op = 0;
  s.iterStart = t;
}

void Engine::advance(int u, double t) {
  UnitState& s = units_[static_cast<size_t>(u)];
  const StageProgram& prog = programs_[static_cast<size_t>(s.stage)];
  while (true) {
    if (s.op == prog.ops.size()) {
      finishIteration(u, t);
      if ((c_.iterations > 0 && s.iteration >= c_.iterations) || stopped_) {
        s.status = Status::Finished;
        setLevel(u, 0.0, false);
        ++finished_;
        lastFinish_ = std::max(lastFinish_, t);
        return;
      }
    }
    const ProgramOp& op = prog.ops[s.op];
    switch (op.kind) {
      case OpKind::HostGap: {
        s.status = Status::HostGap;
        accountUnit(u, t);
        setLevel(u, 0.0, false);
        Rng r = Rng::keyed(c_.seed, RandomPurpose::HostGap, static_cast<uint64_t>(u),
                           static_cast<uint64_t>(s.iteration));
        push(t + c_.hostGapS * (0.75 + 0.5 * r.uniform()), u, false);
        return;
      }
      case OpKind::ZeroGrad:
      case OpKind::Forward:
      case OpKind::Backward:
      case OpKind::GradNormLocal:
      case OpKind::Optimizer:
        startPhase(u, t, op);
        return;
      case OpKind::P2P:
        postP2P(u, t, op);
        return;
      case OpKind::DpPost:
        postDp(u, t);
        ++s.op;
        continue;
      case OpKind::DpReduce:
      case OpKind::DpWait:
      case OpKind::EmbeddingSync:
      case OpKind::GradNorm:
      case OpKind::ParamGather:
        arrive(u, t, op);
        return;
    }
  }
}

void Engine::physicsStep(double t0, double t1) {
  const double dt = t1 - t0;
  const std::vector<double>& temp = thermal_->dieTemp();
  for (int g = 0; g < n_; ++g) {
    const auto i = static_cast<size_t>(g);
    account(g, t1);
    activity_[i] = accAct_[i] / dt;
    busy_[i] = std::min(1.0, accBusy_[i] / dt);
    accAct_[i] = accBusy_[i] = 0;
    power_[i] = power_model_->power(g, clocksNow_[i], temp[i], activity_[i]);
    energy_[i] += power_[i] * dt;
  }
  thermal_->step(power_);
  recordTruth(t0, t1);
  governor_->update(activity_, busy_, thermal_->dieTemp());
  clocksNow_ = governor_->clocks();
  freeNow_ = governor_->unthrottledClocks();
  for (int g = 0; g < n_; ++g)
    bindingNow_[static_cast<size_t>(g)] = governor_->binding(g);
  if (c_.linkCounters) updateCounters(t1);
  recorder_.afterStep(
      t1, GpuStepView{power_, busy_, thermal_->dieTemp(), thermal_->memTemp(), clocksNow_,
                      governor_->allReasons(), linkTx_, linkRx_, netTx_, netRx_, pcieTx_, pcieRx_});
  if (observer_) observer_->onStep(t0, dt, power_);
}

void Engine::addFlow(int u, double t0, double t1, const LinkBytes& b) {
  units_[static_cast<size_t>(u)].flows.push_back({t0, t1, b});
}

void Engine::updateCounters(double t) {
  // Committed bytes, the running phase's share by its progress, running transfers by time;
  // finished transfers are committed.
  for (UnitState& s : units_) {
    LinkBytes b = s.done;
    if (s.status == Status::Running && s.cost) b.add(opBytes(*s.cost), std::min(1.0, s.p));
    for (size_t k = 0; k < s.flows.size();) {
      const Flow& f = s.flows[k];
      const double share =
          f.t1 > f.t0 ? std::clamp((t - f.t0) / (f.t1 - f.t0), 0.0, 1.0) : (t >= f.t1 ? 1.0 : 0.0);
      if (share >= 1.0) {
        s.done.add(f.bytes, 1.0);
        b.add(f.bytes, 1.0);
        s.flows[k] = s.flows.back();
        s.flows.pop_back();
      } else {
        b.add(f.bytes, share);
        ++k;
      }
    }
    for (int g : s.members) {
      const auto i = static_cast<size_t>(g);
      linkTx_[i] = b.linkTx, linkRx_[i] = b.linkRx;
      netTx_[i] = b.netTx, netRx_[i] = b.netRx;
      // Inter-node traffic crosses PCIe to the NIC (GPUDirect RDMA), and the input comes in.
      pcieTx_[i] = b.netTx, pcieRx_[i] = b.netRx + b.hostRx;
    }
  }
}

void Engine::recordTruth(double t0, double t1) {
  // Ground truth of the step [t0, t1) just simulated (docs/simulator.md, "Ground truth"): the GPU
  // ran kernels and its clock was below the clock it would have run at without power and thermal
  // limits, because a limit bound it or because the clock was still climbing back after one
  // (labelled with that limit). No threshold of the analyses enters.
  const double dt = t1 - t0;
  for (int g = 0; g < n_; ++g) {
    const auto i = static_cast<size_t>(g);
    const double deficit = freeNow_[i] - clocksNow_[i];
    if (bindingNow_[i])
      lastBinding_[i] = bindingNow_[i];
    else if (deficit <= 0.5)
      lastBinding_[i] = 0;
    const uint32_t mask = busy_[i] > 0 && deficit > 0.5 ? lastBinding_[i] : 0;
    ThrottleTruth& open = openTruth_[i];
    if (mask != open.reasons) {
      closeTruth(g, t0);
      open.reasons = mask;
      open.start_ns = llround(t0 * 1e9);
    }
    if (mask) {
      open.busy_s += busy_[i] * dt;
      open.deficit_mhz_s += deficit * busy_[i] * dt;
      open.unthrottled_mhz += freeNow_[i] * dt;  // a time integral until the interval closes
    }
  }
}

void Engine::closeTruth(int g, double t) {
  ThrottleTruth& open = openTruth_[static_cast<size_t>(g)];
  if (open.reasons) {
    ThrottleTruth done = open;
    done.gpu = g;
    done.end_ns = llround(t * 1e9);
    const double len = static_cast<double>(done.end_ns - done.start_ns) * 1e-9;
    done.unthrottled_mhz = len > 0 ? done.unthrottled_mhz / len : kNaN;
    result_.throttle.push_back(done);
  }
  open = ThrottleTruth{};
  open.busy_s = open.deficit_mhz_s = open.unthrottled_mhz = 0;
  open.reasons = 0;
}

EngineResult Engine::run(const Progress& progress) {
  const double dt = c_.physicsStepS;
  const double trainingStart = c_.leadInS;
  const double cut = c_.durationS > 0 ? trainingStart + c_.durationS : kInf;
  for (size_t u = 0; u < units_.size(); ++u) {
    units_[u].iterStart = trainingStart;
    push(trainingStart, static_cast<int>(u), false);
  }
  // Rough length of the run for progress reports.
  double nominal = 0;
  for (int s = 0; s < c_.pp; ++s)
    nominal = std::max(nominal, work_.nominalIterationS(s, c_.microbatches()));
  nominal *= 1.0 + static_cast<double>(c_.pp - 1) / std::max(1, c_.microbatches());
  double expected = c_.durationS > 0 ? c_.durationS : 1.15 * nominal * c_.iterations;
  if (c_.iterations > 0 && c_.durationS > 0)
    expected = std::min(expected, 1.15 * nominal * c_.iterations);
  expected += trainingStart + c_.leadOutS;

  double endS = kInf;
  int64_t k = 0;
  int64_t lastReport = -1;
  const int64_t reportEvery = std::max<int64_t>(1, static_cast<int64_t>(1.0 / dt));
  bool started = false;
  while (true) {
    const double t0 = static_cast<double>(k) * dt;
    const double t1 = static_cast<double>(k + 1) * dt;
    stepEnd_ = t1;
    // Clocks changed: re-time every running phase.
    for (size_t u = 0; u < units_.size(); ++u) {
      UnitState& s = units_[u];
      if (s.status != Status::Running) continue;
      refreshPhase(static_cast<int>(u), t0);
      const double end = s.segStart + (1.0 - s.p) * s.D;
      if (end < t1) push(end, static_cast<int>(u), true);
    }
    const double limit = std::min(t1, cut);
    while (!events_.empty() && events_.top().t < limit) {
      const Event e = events_.top();
      events_.pop();
      started = true;
      UnitState& s = units_[static_cast<size_t>(e.unit)];
      if (e.phaseEnd) {
        endPhase(e.unit, e.t);
      } else if (s.status == Status::NotStarted) {
        advance(e.unit, e.t);
      } else {
        resume(e.unit, e.t);
      }
    }
    if (!stopped_ && cut <= t1) {
      // The duration is over: everything stops where it is. A traced phase cut short keeps
      // the kernels that ran before the cut (the GPU was busy with them: its utilization and
      // power say so, and so must its trace).
      stopped_ = true;
      for (size_t u = 0; u < units_.size(); ++u) {
        const UnitState& us = units_[u];
        if (us.status == Status::Running && us.expandThis && us.cost)
          expandPhase(static_cast<int>(u), us.segStart + (1.0 - us.p) * us.D, cut);
        accountUnit(static_cast<int>(u), cut);
        setLevel(static_cast<int>(u), 0.0, false);
        units_[u].bgSpinStart = -1;
        if (units_[u].status != Status::Finished) {
          units_[u].status = Status::Finished;
          ++finished_;
        }
      }
      while (!events_.empty())
        events_.pop();
      lastFinish_ = cut;
    }
    for (UnitState& s : units_) {
      if (s.status != Status::Running) continue;
      s.p += (t1 - s.segStart) / s.D;
      s.segStart = t1;
    }
    physicsStep(t0, t1);
    ++k;
    if (started && finished_ == static_cast<int>(units_.size()) && endS == kInf) {
      result_.trainingEndS = lastFinish_;
      endS = std::ceil((lastFinish_ + c_.leadOutS) / dt) * dt;
      expected = endS;
    }
    if (t1 >= endS - 0.5 * dt) break;
    if (k / reportEvery != lastReport) {
      lastReport = k / reportEvery;
      progress.report(std::min(0.999, t1 / expected),
                      fmt::format("simulating: {:.0f} s of ~{:.0f} s", t1, expected));
    }
  }
  for (int g = 0; g < n_; ++g)
    closeTruth(g, endS);
  result_.endS = endS;
  result_.energyJ = energy_;
  int done = std::numeric_limits<int>::max();
  for (const UnitState& s : units_)
    done = std::min(done, s.iteration);
  result_.completedIterations = done;
  return std::move(result_);
}

}  // namespace

EngineResult runEngine(const EngineSetup& setup, const Progress& progress) {
  Engine e(setup);
  return e.run(progress);
}

}  // namespace wl::sim
