# Writes OUTPUT, a C++ file defining one `constexpr const char NAME[]` per
# NAME=PATH of INPUTS (';'-separated) holding PATH's text verbatim as a raw
# string literal, less its leading `//!` lines (the file's own notes).
#   cmake -DOUTPUT=out.inc -DINPUTS="kA=a.h;kB=b.h" -P embed.cmake
set(text "// Generated from codegen/prelude/ by embed.cmake: do not edit.\n")
foreach(input IN LISTS INPUTS)
  string(FIND "${input}" "=" split)
  string(SUBSTRING "${input}" 0 ${split} name)
  math(EXPR start "${split} + 1")
  string(SUBSTRING "${input}" ${start} -1 path)
  file(READ "${path}" body)
  string(REGEX REPLACE "^(//![^\n]*\n)+" "" body "${body}")
  string(FIND "${body}" ")dlc_prelude\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${path} contains the raw string's delimiter")
  endif()
  string(APPEND text
    "constexpr const char ${name}[] = R\"dlc_prelude(${body})dlc_prelude\";\n")
endforeach()
file(WRITE "${OUTPUT}.tmp" "${text}")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")
