#include "agent/batch_buffer.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace drip::agent {
namespace {

drip::v1::SampleBatch BatchOf(int samples, size_t component_bytes = 8) {
  drip::v1::SampleBatch batch;
  for (int i = 0; i < samples; ++i) {
    drip::v1::Sample* s = batch.add_samples();
    s->set_component(std::string(component_bytes, 'c'));
    s->set_instance("1@2");
    s->mutable_process()->set_anon_rss_bytes(4096);
  }
  return batch;
}

// Sequences currently buffered, oldest first, with their drop stamps.
std::vector<std::pair<uint64_t, uint64_t>> Contents(BatchBuffer& buffer) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  uint64_t after = 0;
  while (auto b = buffer.NextAfter(after)) {
    out.emplace_back(b->sequence(), b->first_dropped_sequence());
    after = b->sequence();
  }
  return out;
}

using Entries = std::vector<std::pair<uint64_t, uint64_t>>;

TEST(BatchBufferTest, SequencesStartAtOneAndIncrease) {
  BatchBuffer buffer({});
  EXPECT_EQ(buffer.Push(BatchOf(1)), 1u);
  EXPECT_EQ(buffer.Push(BatchOf(1)), 2u);
  EXPECT_EQ(buffer.Push(BatchOf(1)), 3u);
  EXPECT_EQ(Contents(buffer), (Entries{{1, 0}, {2, 0}, {3, 0}}));
  EXPECT_EQ(buffer.stats().next_sequence, 4u);
}

TEST(BatchBufferTest, PushOverwritesWhateverSequenceTheCallerSet) {
  BatchBuffer buffer({});
  drip::v1::SampleBatch batch = BatchOf(1);
  batch.set_sequence(77);
  batch.set_first_dropped_sequence(5);
  EXPECT_EQ(buffer.Push(batch), 1u);
  EXPECT_EQ(Contents(buffer), (Entries{{1, 0}}));
}

TEST(BatchBufferTest, AckDropsEverythingUpToTheSequence) {
  BatchBuffer buffer({});
  for (int i = 0; i < 5; ++i) buffer.Push(BatchOf(2));
  buffer.Ack(3);
  EXPECT_EQ(Contents(buffer), (Entries{{4, 0}, {5, 0}}));
  buffer.Ack(2);  // an old ack changes nothing
  EXPECT_EQ(buffer.stats().buffered_batches, 2u);
  buffer.Ack(5);
  EXPECT_EQ(buffer.stats().buffered_batches, 0u);
  EXPECT_EQ(buffer.stats().buffered_bytes, 0u);
  // Acked batches are not "dropped".
  EXPECT_EQ(buffer.stats().dropped_batches, 0u);
}

TEST(BatchBufferTest, NextAfterReturnsBatchesInOrderAndSkipsRemovedOnes) {
  BatchBuffer buffer({});
  for (int i = 0; i < 4; ++i) buffer.Push(BatchOf(1));
  EXPECT_EQ(buffer.NextAfter(0)->sequence(), 1u);
  EXPECT_EQ(buffer.NextAfter(1)->sequence(), 2u);
  buffer.Ack(3);
  EXPECT_EQ(buffer.NextAfter(2)->sequence(), 4u);
  EXPECT_FALSE(buffer.NextAfter(4).has_value());
}

TEST(BatchBufferTest, CountBoundDropsOldestAndCountsThem) {
  BatchBuffer buffer({.max_batches = 3, .max_bytes = 1 << 30});
  for (int i = 0; i < 5; ++i) buffer.Push(BatchOf(10));
  BatchBuffer::Stats stats = buffer.stats();
  EXPECT_EQ(stats.buffered_batches, 3u);
  EXPECT_EQ(stats.dropped_batches, 2u);
  EXPECT_EQ(stats.dropped_samples, 20u);
  // Batches 1 and 2 are gone; the oldest left says where the gap began.
  EXPECT_EQ(Contents(buffer), (Entries{{3, 1}, {4, 0}, {5, 0}}));
}

// The bound is on memory, which a batch's wire size understates several times over.
TEST(BatchBufferTest, ByteBoundDropsOldest) {
  const uint64_t one_batch = BatchOf(10, 100).SpaceUsedLong();
  ASSERT_GT(one_batch, BatchOf(10, 100).ByteSizeLong());
  BatchBuffer buffer({.max_batches = 1000, .max_bytes = 2 * one_batch + one_batch / 2});
  for (int i = 0; i < 4; ++i) buffer.Push(BatchOf(10, 100));
  BatchBuffer::Stats stats = buffer.stats();
  EXPECT_EQ(stats.buffered_batches, 2u);
  EXPECT_LE(stats.buffered_bytes, 2 * one_batch + one_batch / 2);
  EXPECT_EQ(stats.dropped_batches, 2u);
  EXPECT_EQ(stats.dropped_samples, 20u);
  EXPECT_EQ(Contents(buffer), (Entries{{3, 1}, {4, 0}}));
}

TEST(BatchBufferTest, FirstDroppedSequenceIsStampedOnceAndCoversTheWholeEpisode) {
  BatchBuffer buffer({.max_batches = 2, .max_bytes = 1 << 30});
  for (int i = 0; i < 6; ++i) buffer.Push(BatchOf(1));
  // 1..4 dropped one by one; the stamp moves forward and still starts at 1.
  EXPECT_EQ(Contents(buffer), (Entries{{5, 1}, {6, 0}}));
  buffer.Ack(5);
  buffer.Push(BatchOf(1));
  // After the episode the next batches carry no stamp.
  EXPECT_EQ(Contents(buffer), (Entries{{6, 0}, {7, 0}}));
}

TEST(BatchBufferTest, DroppedSamplesTimeSpanAndCountTravelWithTheStamp) {
  BatchBuffer buffer({.max_batches = 2, .max_bytes = 1 << 30});
  for (int i = 1; i <= 5; ++i) {
    drip::v1::SampleBatch batch = BatchOf(3);
    for (int j = 0; j < 3; ++j) batch.mutable_samples(j)->set_timestamp_ms(1000 * i + j);
    buffer.Push(batch);
  }
  // 1, 2 and 3 were dropped: 9 samples from 1000 to 3002.
  std::optional<drip::v1::SampleBatch> front = buffer.NextAfter(0);
  ASSERT_TRUE(front.has_value());
  EXPECT_EQ(front->sequence(), 4u);
  EXPECT_EQ(front->first_dropped_sequence(), 1u);
  EXPECT_EQ(front->dropped_samples(), 9u);
  EXPECT_EQ(front->dropped_from_ms(), 1000);
  EXPECT_EQ(front->dropped_until_ms(), 3002);
  std::optional<drip::v1::SampleBatch> next = buffer.NextAfter(4);
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(next->dropped_samples(), 0u);
}

TEST(BatchBufferTest, DropSpanSurvivesAnEmptiedBufferAndARefusal) {
  BatchBuffer buffer({.max_batches = 1, .max_bytes = 1 << 30});
  drip::v1::SampleBatch first = BatchOf(2);
  first.mutable_samples(0)->set_timestamp_ms(500);
  first.mutable_samples(1)->set_timestamp_ms(700);
  buffer.Push(first);
  buffer.Push(BatchOf(1));  // drops 1
  EXPECT_TRUE(buffer.Reject(2));
  buffer.Push(BatchOf(1));
  std::optional<drip::v1::SampleBatch> front = buffer.NextAfter(0);
  ASSERT_TRUE(front.has_value());
  EXPECT_EQ(front->first_dropped_sequence(), 1u);
  EXPECT_EQ(front->dropped_samples(), 2u);
  EXPECT_EQ(front->dropped_from_ms(), 500);
  EXPECT_EQ(front->dropped_until_ms(), 700);
}

TEST(BatchBufferTest, BatchLargerThanTheByteBoundIsKeptAloneAndStampsTheGap) {
  const uint64_t big = BatchOf(100, 100).ByteSizeLong();
  BatchBuffer buffer({.max_batches = 1000, .max_bytes = big / 2});
  buffer.Push(BatchOf(1));
  buffer.Push(BatchOf(100, 100));
  EXPECT_EQ(Contents(buffer), (Entries{{2, 1}}));
  buffer.Push(BatchOf(100, 100));
  EXPECT_EQ(Contents(buffer), (Entries{{3, 1}}));
}

TEST(BatchBufferTest, DropStampSurvivesAnEmptiedBuffer) {
  BatchBuffer buffer({.max_batches = 1, .max_bytes = 1 << 30});
  buffer.Push(BatchOf(1));
  buffer.Push(BatchOf(1));  // drops 1
  EXPECT_EQ(Contents(buffer), (Entries{{2, 1}}));
  EXPECT_TRUE(buffer.Reject(2));  // the stamped batch is refused: the stamp moves on
  buffer.Push(BatchOf(1));
  EXPECT_EQ(Contents(buffer), (Entries{{3, 1}}));
}

TEST(BatchBufferTest, RejectDropsOnlyThatBatchAndCountsIt) {
  BatchBuffer buffer({});
  for (int i = 0; i < 3; ++i) buffer.Push(BatchOf(4));
  EXPECT_TRUE(buffer.Reject(2));
  EXPECT_FALSE(buffer.Reject(2));
  EXPECT_EQ(Contents(buffer), (Entries{{1, 0}, {3, 0}}));
  EXPECT_EQ(buffer.stats().rejected_batches, 1u);
  EXPECT_EQ(buffer.stats().rejected_samples, 4u);
  EXPECT_EQ(buffer.stats().dropped_batches, 0u);
}

TEST(BatchBufferTest, SetNextSequenceAtLeastMovesFutureSequences) {
  BatchBuffer buffer({});
  buffer.SetNextSequenceAtLeast(101);
  EXPECT_EQ(buffer.Push(BatchOf(1)), 101u);
  buffer.SetNextSequenceAtLeast(50);  // never backwards
  EXPECT_EQ(buffer.Push(BatchOf(1)), 102u);
}

TEST(BatchBufferTest, RestartedAgentRenumbersUnsentBatchesAboveTheCollectorsMark) {
  // Sampled before the first Welcome: numbered from 1, never sent.
  BatchBuffer buffer({});
  for (int i = 0; i < 3; ++i) buffer.Push(BatchOf(1));
  // The collector holds up to 500 from this host's previous agent run.
  buffer.SetNextSequenceAtLeast(501);
  buffer.Ack(500);
  EXPECT_EQ(Contents(buffer), (Entries{{501, 0}, {502, 0}, {503, 0}}));
  EXPECT_EQ(buffer.Push(BatchOf(1)), 504u);
}

TEST(BatchBufferTest, RenumberingKeepsADropGap) {
  BatchBuffer buffer({.max_batches = 2, .max_bytes = 1 << 30});
  for (int i = 0; i < 4; ++i) buffer.Push(BatchOf(1));  // 1, 2 dropped
  buffer.SetNextSequenceAtLeast(11);
  // The gap [11, 13) stands for the two dropped batches.
  EXPECT_EQ(Contents(buffer), (Entries{{13, 11}, {14, 0}}));
}

TEST(BatchBufferTest, SentBatchesAreNeverRenumbered) {
  BatchBuffer buffer({});
  for (int i = 0; i < 3; ++i) buffer.Push(BatchOf(1));
  ASSERT_TRUE(buffer.NextAfter(0).has_value());  // batch 1 went out
  ASSERT_TRUE(buffer.NextAfter(1).has_value());  // batch 2 went out
  // After a reconnect the collector holds up to 1: batch 2 and 3 are resent as is.
  buffer.SetNextSequenceAtLeast(2);
  buffer.Ack(1);
  EXPECT_EQ(buffer.stats().buffered_batches, 2u);
  EXPECT_EQ(buffer.stats().next_sequence, 4u);
  // A mark above the sent batch 2 moves only the unsent batch 3.
  buffer.SetNextSequenceAtLeast(11);
  buffer.Ack(10);
  EXPECT_EQ(Contents(buffer), (Entries{{11, 0}}));
}

TEST(BatchBufferTest, PushListenerRunsOnEveryPush) {
  BatchBuffer buffer({});
  int calls = 0;
  buffer.SetPushListener([&] { ++calls; });
  buffer.Push(BatchOf(1));
  buffer.Push(BatchOf(1));
  buffer.SetPushListener(nullptr);
  buffer.Push(BatchOf(1));
  EXPECT_EQ(calls, 2);
}

TEST(BatchBufferTest, ConcurrentPushAndAckKeepSequencesUniqueAndOrdered) {
  BatchBuffer buffer({.max_batches = 50, .max_bytes = 1 << 30});
  constexpr int kPushes = 2000;
  std::thread pusher([&] {
    for (int i = 0; i < kPushes; ++i) buffer.Push(BatchOf(1));
  });
  uint64_t last_seen = 0;
  std::vector<uint64_t> seen;
  while (last_seen < kPushes) {
    if (auto b = buffer.NextAfter(last_seen)) {
      seen.push_back(b->sequence());
      last_seen = b->sequence();
      buffer.Ack(last_seen);
    }
  }
  pusher.join();
  for (size_t i = 1; i < seen.size(); ++i) ASSERT_GT(seen[i], seen[i - 1]);
  BatchBuffer::Stats stats = buffer.stats();
  // Every batch was acknowledged (seen) or dropped for the bound; a batch may be both
  // when a push drops it between NextAfter and Ack.
  EXPECT_GE(seen.size() + stats.dropped_batches, static_cast<size_t>(kPushes));
  EXPECT_EQ(stats.buffered_batches, 0u);
}

}  // namespace
}  // namespace drip::agent
