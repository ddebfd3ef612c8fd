# Run by CPack after it installed the package's files into its staging
# directory (CPACK_PRE_BUILD_SCRIPTS): writes the Debian changelog from
# CHANGELOG.md's section of the version packaged (its date and its items),
# so that the package's history is the project's, written once. The package
# is native (made by the project itself: its version has no Debian
# revision), so Debian names its changelog usr/share/doc/heapline/changelog.gz. A version without its section in
# CHANGELOG.md is refused: a release says what it brings.
set(version ${CPACK_PACKAGE_VERSION})
# The file's lines as a CMake list, its square brackets and semicolons first
# written as <lb>, <rb> and <sc>: CMake does not split a list inside square
# brackets, so one item with a `]]>` or a lone `[` would join every line
# after it into one (the section then went unfound).
file(READ ${CPACK_HEAPLINE_CHANGELOG} text ENCODING UTF-8)
string(REPLACE "[" "<lb>" text "${text}")
string(REPLACE "]" "<rb>" text "${text}")
string(REPLACE ";" "<sc>" text "${text}")
string(REPLACE "\n" ";" lines "${text}")
set(in_section FALSE)
set(date "")
set(items "")
foreach(line IN LISTS lines)
  if(line MATCHES "^## <lb>([^<]+)<rb>( - ([0-9]+-[0-9]+-[0-9]+))?")
    if(in_section)
      break()
    endif()
    if(CMAKE_MATCH_1 STREQUAL version)
      set(in_section TRUE)
      # Quoted: an undated section sets it empty rather than unsetting it
      # (an unset `date` reads as the word "date" in the test below).
      set(date "${CMAKE_MATCH_3}")
    endif()
  elseif(in_section AND line MATCHES "^- (.*)")
    string(APPEND items "  * ${CMAKE_MATCH_1}\n")
  elseif(in_section AND line MATCHES "^  +(.*)" AND NOT items STREQUAL "")
    string(APPEND items "    ${CMAKE_MATCH_1}\n")
  endif()
endforeach()
string(REPLACE "<lb>" "[" items "${items}")
string(REPLACE "<rb>" "]" items "${items}")
string(REPLACE "<sc>" ";" items "${items}")
if(NOT in_section OR date STREQUAL "" OR items STREQUAL "")
  message(FATAL_ERROR "${CPACK_HEAPLINE_CHANGELOG} has no dated section `## [${version}] - YYYY-MM-DD` with items: "
                      "the Debian changelog is made from it")
endif()
execute_process(COMMAND date -u -R -d "${date} 00:00:00" OUTPUT_VARIABLE rfc2822_date OUTPUT_STRIP_TRAILING_WHITESPACE
                COMMAND_ERROR_IS_FATAL ANY)
set(changelog "${CPACK_PACKAGE_NAME} (${version}) unstable; urgency=medium\n\n${items}\n -- ${CPACK_PACKAGE_CONTACT}  ${rfc2822_date}\n")
set(docdir ${CPACK_TEMPORARY_DIRECTORY}${CPACK_PACKAGING_INSTALL_PREFIX}/${CPACK_HEAPLINE_DOCDIR})
file(WRITE ${docdir}/changelog "${changelog}")
execute_process(COMMAND gzip -9nf ${docdir}/changelog COMMAND_ERROR_IS_FATAL ANY)
