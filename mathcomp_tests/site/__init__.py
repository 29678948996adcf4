"""The nightly site (`mathcomp site`): a static folder of pages built from a folder of nights, each as
`mathcomp record` wrote it (record/).

`nights` reads the nights (each checked as history reads it) and ranks each night's verdict;
`index_page` draws the index (the newest night per model first, then every night), with `model_row`;
`history_page` is the history page (history/) of the same nights; `night_summary` is what the site keeps of
a night's summary; `folder_swap` puts a new folder where an old one was in one step; `build` makes the
whole site in a folder of its own (marked by .mathcomp-site). docs/site.md describes what it holds.
"""
