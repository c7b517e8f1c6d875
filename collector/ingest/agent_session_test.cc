#include "collector/ingest/agent_session.h"

#include <gtest/gtest.h>

#include "common/base/clock.h"

namespace drip::collector {
namespace {

// A collector wired without one of a session's parts would crash at the first message
// that needs it, on a stream, far from the mistake; it stops where the session is made,
// naming the part.
TEST(AgentSessionDeathTest, ASessionWithoutARequiredPartStopsNamingIt) {
  AgentSessionParts parts;
  EXPECT_DEATH(AgentSession(parts, CallerCredentials{}, "ipv4:127.0.0.1:1"),
               "AgentSessionParts::validator is null");
  FakeClock clock(0);
  SampleValidator validator(SampleValidatorOptions{}, &clock);
  parts.validator = &validator;
  EXPECT_DEATH(AgentSession(parts, CallerCredentials{}, "ipv4:127.0.0.1:1"),
               "AgentSessionParts::store is null");
}

}  // namespace
}  // namespace drip::collector
