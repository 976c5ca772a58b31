#pragma once
// The results database's schema, as the list of migrations that build it:
// migration i takes the schema from version i to i + 1. A migration is only
// ever appended, never edited: databases already at its version skip it.
#include <string>
#include <vector>

namespace sp::db {

const std::vector<std::string>& migrations();

}  // namespace sp::db
