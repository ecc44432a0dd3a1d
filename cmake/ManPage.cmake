# SPDX-License-Identifier: MIT
# Script mode (cmake -P): writes OUT, the man page of `JSMF COMMAND --help` (section 1). The
# help text is kept as printed (no-fill), so its lists and examples read as in the terminal.
execute_process(COMMAND "${JSMF}" "${COMMAND}" --help OUTPUT_VARIABLE help RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  # E.g. a login node where MPI will not start outside the scheduler: the build goes on,
  # and the page says where the text is.
  message(WARNING "${JSMF} ${COMMAND} --help failed (${status}): man page jsmf-${COMMAND} points at --help")
  file(WRITE "${OUT}" ".TH JSMF-${COMMAND} 1 \"\" \"jsmf ${VERSION}\" \"jsmf manual\"\n"
                      ".SH NAME\njsmf-${COMMAND}\n.SH DESCRIPTION\nSee jsmf ${COMMAND} \\-\\-help.\n")
  return()
endif()
# (string(FIND) and SUBSTRING, not REGEX REPLACE: CMake's ^ matches again after each
# replacement.)
string(FIND "${help}" "\n" first_newline)
string(SUBSTRING "${help}" 0 ${first_newline} summary)   # the first line: what it does
math(EXPR body_start "${first_newline} + 1")
string(SUBSTRING "${help}" ${body_start} -1 body)
string(REPLACE "${JSMF}" "jsmf" body "${body}")            # Usage: jsmf show, not the build path
string(REPLACE "\\" "\\e" body "${body}")
set(body "\n${body}")                                    # a leading . or ' is a roff request:
string(REGEX REPLACE "\n([.'])" "\n\\\\&\\1" body "${body}")  # \& in front of it
string(SUBSTRING "${body}" 1 -1 body)
string(REPLACE "\\" "\\e" summary "${summary}")
string(TIMESTAMP today "%Y-%m-%d" UTC)
file(WRITE "${OUT}" ".TH JSMF-${COMMAND} 1 \"${today}\" \"jsmf ${VERSION}\" \"jsmf manual\"\n"
                    ".SH NAME\njsmf-${COMMAND} \\- ${summary}\n"
                    ".SH DESCRIPTION\n.nf\n${body}.fi\n"
                    ".SH SEE ALSO\njsmf \\-\\-help, jsmf show \\-\\-schema\n")
