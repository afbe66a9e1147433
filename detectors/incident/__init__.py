"""The incident as a whole: one timeline, cross-source correlation, ranked hypotheses, digest."""
