"""The ``joint-tf-publisher`` command line (``main``) and its views: describe/check, graph,
plot, sweep, status and the demo joint-state source."""
