"""Ranking: PageRank and personalised PageRank engines with convergence history."""
