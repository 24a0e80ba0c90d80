# check_docs.py on a small tree with one of each kind of fault beside links
# that resolve: it must exit 1 and name each fault, and only those.
#   cmake -DPYTHON=... -DCHECK=scripts/check_docs.py -DWORK=dir -P links_catches_test.cmake
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/sub")
file(WRITE "${WORK}/sub/page.md" "# A page\n\n## Its `code` section (v2)\n")
file(WRITE "${WORK}/deck.toml" "[grid]\nextent = [4, 4]\n\n[run]\nsteps = 3\n")
file(WRITE "${WORK}/a.md" "# Top\n\n\
[fine](sub/page.md#its-code-section-v2) [fine too](#top) [web](https://example.org/none)\n\
[missing file](sub/nothere.md) and `[in code](not/checked.md)`\n\
[missing anchor](sub/page.md#no-such-section)\n\
\n\
<!-- verbatim: deck.toml -->\n\
```toml\n[grid]\nextent = [4, 4]\n# …\nsteps = 3\n```\n\
\n\
<!-- verbatim: deck.toml -->\n\
```toml\n[run]\nsteps = 30\n```\n")
execute_process(COMMAND "${PYTHON}" "${CHECK}" --root "${WORK}" "${WORK}/a.md"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("check_docs.py: exit ${rc}\n${out}${err}")
set(failures "")
if(NOT rc EQUAL 1)
  list(APPEND failures "exit code ${rc}, not 1")
endif()
foreach(want IN ITEMS "a.md:4: broken link \\(sub/nothere.md\\)"
                      "a.md:5: broken link \\(sub/page.md#no-such-section\\)"
                      "a.md:15: quoted block: not in deck.toml"
                      "1 Markdown files, 7 links and quotes, 3 broken")
  if(NOT out MATCHES "${want}")
    list(APPEND failures "no line matching '${want}'")
  endif()
endforeach()
foreach(unwanted IN ITEMS "page.md#its-code" "#top" "example.org" "not/checked" "a.md:7:")
  if(out MATCHES "${unwanted}")
    list(APPEND failures "reported a good link or block: '${unwanted}'")
  endif()
endforeach()
if(failures)
  string(REPLACE ";" "\n  " failures "${failures}")
  message(FATAL_ERROR "FAILED:\n  ${failures}")
endif()
message("PASSED")
