"""What the project's tests share: running the suite as a user does, real local servers (an OpenAI-style
one that misbehaves on a schedule, transformers' own), reading a report, a headless browser, a clean
virtualenv with the built wheel."""
