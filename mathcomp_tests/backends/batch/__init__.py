"""--batch: an API model answered through its provider's batch API.

``protocol`` is the provider-neutral interface (requests, ``BatchStatus``, results, the errors); ``openai``
and ``anthropic`` implement it, each encoding its requests from the live call's own parameters
(``encoding``); ``pricing`` says what an answer cost; ``records`` keeps every batch created in the cache
folder so that none is paid twice; ``runner`` creates, waits, collects and resends; ``backend`` is the
Backend the response cache wraps, holding the live api backend and the runner; ``outcome`` is what the
batches did, as summary.json's `batch` section says it. Nothing heavy is imported here.
"""
