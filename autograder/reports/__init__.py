"""Room 5: pure functions from results to what people and machines read."""
