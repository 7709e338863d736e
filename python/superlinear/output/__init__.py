"""What experiments leave behind: result files (:mod:`.results`), plots (:mod:`.plots`,
:mod:`.figures`), summary tables (:mod:`.tables`), the HTML report (:mod:`.report`) and the
one check of every output path (:mod:`.paths`)."""
