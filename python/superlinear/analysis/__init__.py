"""Analysis of scaling: the paper's analytic laws (and, later, USL fits and the advisor)."""
