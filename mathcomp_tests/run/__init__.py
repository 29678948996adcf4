"""The run: ``orchestrator`` (Run, which calls each step of the flow for every case), ``facts`` (what is
written about a run, gathered once), and the writers of summary.json over those facts (``summary``,
``comparison``, ``invariance``, ``served``); ``case``, ``comparator``, ``batching``, ``prefetch``,
``answering`` and ``folders`` serve the Run. Only run/ and the plugin hold a Run."""
