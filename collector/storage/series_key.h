// Key layout of the store's column families (docs/storage.md draws it).
//
// `series` CF: one chunk per series per time window,
//     be64(series_id) be64(window_start_ms ^ 2^63)                      (16 bytes)
//   so one series' chunks are contiguous and time-ordered, and a time range of a
//   series is one short range scan. The sign bit is flipped so that the big-endian
//   bytes of a signed timestamp sort like the number.
//
// `meta` CF:
//   "s/" name(host) name(component) name(instance) -> be64(series_id)   series index
//   "i/" be64(series_id)            -> SeriesNames                      reverse index
//   "h/" host                       -> drip.v1.HostInfo                 host record + mark
//   "g/" name(host) be64(from_seq)  -> GapValue                         missing batches
//   "v/" name(host) name(component) be64(first_seen_ms ^ 2^63) name(instance)
//                                   -> drip.v1.InstanceVersion          what an instance runs
//   "c/..."                         -> store-wide counters and settings
//
// `staging` CF: one staged batch (staged_batch.h) per stored agent batch, until folded,
//   name(host) be64(sequence)           -> staged batch
//
//   where name(x) is x with each 0x00 byte written 0x00 0x01, then 0x00 0x00: any
//   bytes are allowed in names, no name is a prefix of another's encoding, and order
//   is kept, so "s/" name(host) name(component) is the prefix of exactly that
//   component's instances.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace drip::collector {

inline constexpr size_t kChunkKeySize = 16;

inline constexpr std::string_view kSeriesIndexPrefix = "s/";
inline constexpr std::string_view kSeriesNamesPrefix = "i/";
inline constexpr std::string_view kHostRecordPrefix = "h/";
inline constexpr std::string_view kGapRecordPrefix = "g/";
inline constexpr std::string_view kVersionRecordPrefix = "v/";
// Next series id to allocate (be64). Written with every batch that allocates one.
inline constexpr std::string_view kNextSeriesIdKey = "c/next_series_id";
// The chunk window the store was created with (be64 milliseconds).
inline constexpr std::string_view kChunkWindowKey = "c/chunk_window_ms";
// The retention cutoff of the last full retention compaction (be64 of signed ms).
inline constexpr std::string_view kRetentionCutoffKey = "c/retention_cutoff_ms";
// When a recovery after a write error last proved a write goes through (be64 ms).
inline constexpr std::string_view kWriteProbeKey = "c/write_probe_ms";

void AppendBigEndian64(uint64_t value, std::string* out);
// `data` must hold at least 8 bytes.
uint64_t ReadBigEndian64(const char* data);

// Start of the window of `chunk_window_ms` that holds `timestamp_ms`, rounding down
// for negative timestamps too. `chunk_window_ms` must be positive.
int64_t WindowStart(int64_t timestamp_ms, int64_t chunk_window_ms);

void AppendChunkKey(uint64_t series_id, int64_t window_start_ms, std::string* out);
std::string ChunkKey(uint64_t series_id, int64_t window_start_ms);
// False when `key` is not a chunk key (wrong size).
bool ParseChunkKey(std::string_view key, uint64_t* series_id, int64_t* window_start_ms);

std::string SeriesIndexKey(std::string_view host, std::string_view component,
                           std::string_view instance);
std::string SeriesIndexPrefix(std::string_view host, std::string_view component);
// Every index key of `host` starts with this; ParseSeriesIndexComponent reads the
// component that follows it.
std::string SeriesIndexHostPrefix(std::string_view host);
bool ParseSeriesIndexComponent(std::string_view key, std::string_view host_prefix,
                               std::string* component);
// Reads the instance from a series index key that starts with `prefix`; false when the
// rest of the key is not exactly one encoded name.
bool ParseSeriesIndexInstance(std::string_view key, std::string_view prefix, std::string* instance);

std::string SeriesNamesKey(uint64_t series_id);
bool ParseSeriesNamesKey(std::string_view key, uint64_t* series_id);

std::string HostRecordKey(std::string_view host);

std::string GapRecordPrefix(std::string_view host);
std::string GapRecordKey(std::string_view host, uint64_t from_sequence);
// Reads from_sequence from a gap key that starts with GapRecordPrefix(host).
bool ParseGapRecordKey(std::string_view key, std::string_view prefix, uint64_t* from_sequence);

// A (host, component)'s instance versions sort by when each instance was first seen.
std::string VersionRecordPrefix(std::string_view host, std::string_view component);
std::string VersionRecordKey(std::string_view host, std::string_view component,
                             int64_t first_seen_ms, std::string_view instance);

// Staging keys are written once and removed with SingleDelete: a host's sequence is
// stored at most once, which is what SingleDelete requires.
std::string StagingPrefix(std::string_view host);
std::string StagingKey(std::string_view host, uint64_t sequence);

}  // namespace drip::collector
