#include "collector/cluster/rendezvous.h"

#include <algorithm>
#include <utility>

namespace drip::collector {
namespace {

constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ULL;
constexpr uint64_t kFnvPrime = 0x100000001b3ULL;

uint64_t Fnv1a(uint64_t h, std::string_view bytes) {
  for (const char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= kFnvPrime;
  }
  return h;
}

// MurmurHash3's fmix64: FNV's low bits are weak, and the weights are compared whole.
uint64_t Mix(uint64_t h) {
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

}  // namespace

uint64_t RendezvousWeight(std::string_view member, std::string_view host) {
  // A separator byte no name carries, so that ("ab", "c") and ("a", "bc") differ.
  uint64_t h = Fnv1a(kFnvOffset, member);
  h = Fnv1a(h, std::string_view("\0", 1));
  return Mix(Fnv1a(h, host));
}

std::string RendezvousOwner(std::string_view host, const std::vector<std::string>& members) {
  const std::string* best = nullptr;
  uint64_t best_weight = 0;
  for (const std::string& member : members) {
    const uint64_t weight = RendezvousWeight(member, host);
    if (best == nullptr || weight > best_weight || (weight == best_weight && member < *best)) {
      best = &member;
      best_weight = weight;
    }
  }
  return best == nullptr ? std::string() : *best;
}

std::vector<std::string> RendezvousRanking(std::string_view host,
                                           std::vector<std::string> members) {
  std::vector<std::pair<uint64_t, std::string>> weighted;
  weighted.reserve(members.size());
  for (std::string& member : members) {
    weighted.emplace_back(RendezvousWeight(member, host), std::move(member));
  }
  std::sort(weighted.begin(), weighted.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::vector<std::string> ranking;
  ranking.reserve(weighted.size());
  for (auto& [weight, member] : weighted) ranking.push_back(std::move(member));
  return ranking;
}

}  // namespace drip::collector
