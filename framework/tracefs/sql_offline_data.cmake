# Writes OUTPUT, a C++ file holding the files the offline sqlhist compiler
# reads (sql_offline_data.h), as raw string literals:
#   TESTDATA  directory of the captured files
#   KERNEL    the suffix of their names (6.12: available_events-6.12.txt)
#   EVENTS    system/name of each built-in format, comma-separated; the
#             format of sched/sched_waking is format-sched_waking-KERNEL.txt
# Run with cmake -P at build time, so no captured file is pasted into source
# and an edited one is rebuilt.
cmake_minimum_required(VERSION 3.25)

foreach(var OUTPUT TESTDATA KERNEL EVENTS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "sql_offline_data.cmake: -D${var}=... is required")
  endif()
endforeach()

# A raw string ends at `)delimiter"`: pick a delimiter no file contains.
function(pick_delimiter text out)
  foreach(candidate tbdata tbdata_1 tbdata_2 tbdata_3)
    string(FIND "${text}" ")${candidate}\"" at)
    if(at EQUAL -1)
      set(${out} ${candidate} PARENT_SCOPE)
      return()
    endif()
  endforeach()
  message(FATAL_ERROR "sql_offline_data.cmake: every raw-string delimiter occurs in the data")
endfunction()

# `text` as adjacent raw string literals (one array once compiled), cut at
# line ends into pieces of at most 16000 bytes: compilers limit the length
# of one literal piece (MSVC's is 16380), g++ does not, but a short piece is
# also one an editor shows.
function(raw_literal text delimiter out)
  set(max 16000)
  set(result "")
  string(LENGTH "${text}" left)
  if(left EQUAL 0)
    set(${out} "\"\"" PARENT_SCOPE)
    return()
  endif()
  while(left GREATER 0)
    if(left GREATER max)
      string(SUBSTRING "${text}" 0 ${max} piece)
      string(FIND "${piece}" "\n" last_newline REVERSE)
      if(last_newline GREATER -1)
        math(EXPR cut "${last_newline} + 1")
        string(SUBSTRING "${text}" 0 ${cut} piece)
      endif()
    else()
      set(piece "${text}")
    endif()
    string(LENGTH "${piece}" taken)
    string(APPEND result "\n    R\"${delimiter}(${piece})${delimiter}\"")
    string(SUBSTRING "${text}" ${taken} -1 text)
    math(EXPR left "${left} - ${taken}")
  endwhile()
  set(${out} "${result}" PARENT_SCOPE)
endfunction()

function(embed name file out_literal)
  if(NOT EXISTS "${file}")
    message(FATAL_ERROR "sql_offline_data.cmake: ${file} does not exist")
  endif()
  file(READ "${file}" text)
  pick_delimiter("${text}" delimiter)
  raw_literal("${text}" ${delimiter} literal)
  set(${out_literal} "constexpr char ${name}[] =${literal};\n" PARENT_SCOPE)
endfunction()

string(REPLACE "," ";" events "${EVENTS}")
set(body "")
set(table "")
set(index 0)
embed(kAvailableEvents "${TESTDATA}/available_events-${KERNEL}.txt" literal)
string(APPEND body "${literal}")
foreach(event IN LISTS events)
  string(REPLACE "/" ";" parts "${event}")
  list(LENGTH parts n)
  if(NOT n EQUAL 2)
    message(FATAL_ERROR "sql_offline_data.cmake: `${event}` is not system/name")
  endif()
  list(GET parts 0 system)
  list(GET parts 1 name)
  embed(kFormat${index} "${TESTDATA}/format-${name}-${KERNEL}.txt" literal)
  string(APPEND body "\n// format-${name}-${KERNEL}.txt\n${literal}")
  string(APPEND table "    {\"${system}\", \"${name}\", {kFormat${index}, sizeof kFormat${index} - 1}},\n")
  math(EXPR index "${index} + 1")
endforeach()

set(code "// Generated at build time by framework/tracefs/sql_offline_data.cmake
// from framework/tracefs/testdata/ (captured on ${KERNEL}): do not edit.
#include \"framework/tracefs/sql_offline_data.h\"

namespace tracebed::tracefs {

namespace {

// available_events-${KERNEL}.txt
${body}
constexpr OfflineFormat kFormats[] = {
${table}};

}  // namespace

std::string_view offline_available_events_text() { return {kAvailableEvents, sizeof kAvailableEvents - 1}; }

std::span<const OfflineFormat> offline_formats() { return kFormats; }

}  // namespace tracebed::tracefs
")
file(WRITE "${OUTPUT}" "${code}")
