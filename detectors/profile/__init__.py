"""CPU profile analysis: hotspots, the rule table that says what they mean, and profile differences."""
