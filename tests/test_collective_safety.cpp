// Collective safety: every public entry point that validates its input throws the
// same ember::error on every rank (filled in by the reliability work, issue 6).
#include "common.hpp"

TEST_CASE("collective safety placeholder", "[collective]") { CHECK(test::all_ranks(true)); }
