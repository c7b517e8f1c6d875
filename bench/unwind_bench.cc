// StackUnwinder benchmark: the host-side cost of one sampled allocation's stack in heap
// snapshots, on a deep stack (about 40 frames, no frame pointers) captured in this
// process, which links gRPC and protobuf so that its map holds the modules of a real
// service. The stack runs through this binary's template code, libstdc++.so (std::ostream)
// and libc.so.6 (pthread_once).
//
//   unwind_bench [--benchmark_filter=REGEX] [--benchmark_repetitions=N]
//
// Figures, per stack unless said otherwise:
//   BM_ForProcess              reading the map (StackUnwinder::ForProcess)
//   BM_Unwind                  DWARF unwinding with the modules' CFI already loaded
//   BM_SymbolizeCold           every pc of a fresh unwinder: opens each module's ELF,
//                              symbol table and DWARF (separate debug files included)
//   BM_SymbolizeUncached       pcs not cached, modules already loaded
//   BM_SymbolizeCached         pcs cached: what repeated stacks cost
//   BM_UnwindAndSymbolizeCached  the steady state of one sample
// "frames/s" (items) divides by the number of frames.
#include <benchmark/benchmark.h>
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "agent/heap/stack_unwinder.h"
#include "agent/heap/testing/stack_capture.h"
#include "agent/heap/testing/unwind_chain.h"
#include "drip/v1/agent.pb.h"

namespace {

using drip::agent::StackUnwinder;
using drip::agent::testing::CapturedStack;

constexpr int kMaxFrames = 128;
constexpr int kRecursionDepth = 6;

const CapturedStack& DeepStack() {
  static const CapturedStack* stack = [] {
    auto* captured = new CapturedStack;
    drip::agent::testing::CaptureDeepStack(kRecursionDepth, captured);
    return captured;
  }();
  return *stack;
}

std::unique_ptr<StackUnwinder> NewUnwinder(benchmark::State& state) {
  absl::StatusOr<std::unique_ptr<StackUnwinder>> unwinder = StackUnwinder::ForProcess(getpid());
  if (!unwinder.ok()) {
    state.SkipWithError(std::string(unwinder.status().message()).c_str());
    return nullptr;
  }
  return std::move(unwinder).value();
}

std::vector<uint64_t> UnwindOrDie(StackUnwinder& unwinder) {
  absl::StatusOr<std::vector<uint64_t>> pcs =
      unwinder.Unwind(DeepStack().AsUserStack(), kMaxFrames);
  if (!pcs.ok()) {
    fprintf(stderr, "unwind failed: %s\n", std::string(pcs.status().message()).c_str());
    abort();
  }
  return *pcs;
}

void SymbolizeAll(StackUnwinder& unwinder, const std::vector<uint64_t>& pcs) {
  for (size_t i = 0; i < pcs.size(); ++i) {
    benchmark::DoNotOptimize(unwinder.Symbolize(pcs[i], i > 0));
  }
}

void SetFrames(benchmark::State& state, size_t frames) {
  state.counters["frames"] = static_cast<double>(frames);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * frames));
}

void BM_ForProcess(benchmark::State& state) {
  for (auto _ : state) {
    std::unique_ptr<StackUnwinder> unwinder = NewUnwinder(state);
    benchmark::DoNotOptimize(unwinder.get());
  }
}
BENCHMARK(BM_ForProcess)->Unit(benchmark::kMicrosecond);

void BM_Unwind(benchmark::State& state) {
  std::unique_ptr<StackUnwinder> unwinder = NewUnwinder(state);
  if (unwinder == nullptr) return;
  const size_t frames = UnwindOrDie(*unwinder).size();  // loads the CFI
  for (auto _ : state) {
    absl::StatusOr<std::vector<uint64_t>> pcs =
        unwinder->Unwind(DeepStack().AsUserStack(), kMaxFrames);
    benchmark::DoNotOptimize(pcs);
  }
  SetFrames(state, frames);
}
BENCHMARK(BM_Unwind)->Unit(benchmark::kMicrosecond);

void BM_SymbolizeCold(benchmark::State& state) {
  size_t frames = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::unique_ptr<StackUnwinder> unwinder = NewUnwinder(state);
    if (unwinder == nullptr) return;
    const std::vector<uint64_t> pcs = UnwindOrDie(*unwinder);
    frames = pcs.size();
    state.ResumeTiming();
    SymbolizeAll(*unwinder, pcs);
    state.PauseTiming();
    unwinder.reset();  // dwfl_end, not part of the figure
    state.ResumeTiming();
  }
  SetFrames(state, frames);
}
BENCHMARK(BM_SymbolizeCold)->Unit(benchmark::kMillisecond);

void BM_SymbolizeUncached(benchmark::State& state) {
  std::unique_ptr<StackUnwinder> unwinder = NewUnwinder(state);
  if (unwinder == nullptr) return;
  const std::vector<uint64_t> pcs = UnwindOrDie(*unwinder);
  SymbolizeAll(*unwinder, pcs);  // loads every module's symbols and DWARF
  for (auto _ : state) {
    state.PauseTiming();
    // Empties the per-pc cache; the modules and what was parsed of them stay.
    if (!unwinder->RefreshModules().ok()) abort();
    state.ResumeTiming();
    SymbolizeAll(*unwinder, pcs);
  }
  SetFrames(state, pcs.size());
}
BENCHMARK(BM_SymbolizeUncached)->Unit(benchmark::kMicrosecond);

void BM_SymbolizeCached(benchmark::State& state) {
  std::unique_ptr<StackUnwinder> unwinder = NewUnwinder(state);
  if (unwinder == nullptr) return;
  const std::vector<uint64_t> pcs = UnwindOrDie(*unwinder);
  SymbolizeAll(*unwinder, pcs);
  for (auto _ : state) SymbolizeAll(*unwinder, pcs);
  SetFrames(state, pcs.size());
}
BENCHMARK(BM_SymbolizeCached)->Unit(benchmark::kMicrosecond);

void BM_UnwindAndSymbolizeCached(benchmark::State& state) {
  std::unique_ptr<StackUnwinder> unwinder = NewUnwinder(state);
  if (unwinder == nullptr) return;
  const std::vector<uint64_t> first = UnwindOrDie(*unwinder);
  SymbolizeAll(*unwinder, first);
  for (auto _ : state) SymbolizeAll(*unwinder, UnwindOrDie(*unwinder));
  SetFrames(state, first.size());
}
BENCHMARK(BM_UnwindAndSymbolizeCached)->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
  // Uses gRPC and protobuf so that their libraries are mapped, as in drip's own daemons.
  drip::v1::Hello hello;
  printf("gRPC %s, protobuf message %s, %zu-byte stack copy\n", grpc::Version().c_str(),
         hello.GetTypeName().c_str(), DeepStack().bytes.size());
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
