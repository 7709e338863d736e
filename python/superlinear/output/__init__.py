"""What experiments leave behind: result files (:mod:`.results`), plots (:mod:`.plots`,
:mod:`.figures`), summary tables (:mod:`.tables`) and the HTML report (:mod:`.report`)."""
