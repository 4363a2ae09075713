# Every integer flag of weft's command-line tools refuses what is not an
# integer of its range with exit code 2 (bad usage) and a message naming
# the flag: -1, 2^32 (where the flag is 32 bits), 2^64, 0 (where it means
# nothing), a float and trailing junk. One table, one loop; a flag added
# to a tool belongs in the table.
#   cmake -DDECODE=weft-decode -DDECODE_GEN=weft-decode-gen -DRUN=weft-run
#         -DINFO=weft-info -DPROGRAM=weft_run.wvm -DWORK=dir
#         -P cli_integer_flags.cmake
# (DECODE and DECODE_GEN empty where the examples are not built.)
file(MAKE_DIRECTORY ${WORK})
set(model ${WORK}/cli-flags-tiny.gguf)
if(DECODE_GEN)
  execute_process(COMMAND ${DECODE_GEN} --shape=tiny --format=gguf
                          --out=${model} RESULT_VARIABLE code)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "weft-decode-gen could not write ${model}")
  endif()
endif()

# The bad values, by name.
set(v_zero 0)
set(v_negative -1)
set(v_2p32 4294967296)
set(v_2p64 18446744073709551616)
set(v_float 1.5)
set(v_junk 7x)
set(v_empty "")
set(common "negative+2p64+float+junk+empty")

# Rows: TOOL|ARGUMENTS (^-separated, @V@ the value)|FLAG named|BAD VALUES
# (+-separated names; no ';' in a row, which would split the list).
set(rows
  "DECODE|--model=${model}^--steps=@V@|--steps|${common}+2p32"
  "DECODE|--model=${model}^--batch=@V@|--batch|${common}+2p32+zero"
  "DECODE|--model=${model}^--top-k=@V@|--top-k|${common}+2p32"
  "DECODE|--model=${model}^--seed=@V@|--seed|${common}"
  "DECODE|--model=${model}^--workers=@V@|--workers|${common}+2p32+zero"
  "DECODE|--model=${model}^--threads=@V@|--threads|${common}+2p32+zero"
  "DECODE|--model=${model}^--prompt-ids=1,@V@|--prompt-ids|${common}+2p32"
  "DECODE|--model=${model}^--prompt-ids=@V@,1|--prompt-ids|${common}+2p32"
  "DECODE|--model=${model}^--stop=@V@|--stop|${common}+2p32"
  "DECODE|--model=${model}^--warmup=@V@|--warmup|${common}+2p32"
  "DECODE|--model=${model}^--device=local-task?workers=@V@|workers|${common}+2p32"
  "DECODE_GEN|--shape=tiny^--out=${WORK}/unused.gguf^--seed=@V@|--seed|${common}"
  "RUN|--module=${PROGRAM}^--function=add^--input=i32=@V@^--input=i32=1|i32=|2p64+float+junk+empty+2p32"
  "RUN|--module=${PROGRAM}^--function=echo^--input=@Vx4@f32=1|@Vx4@f32|${common}+2p32"
  "RUN|--module=${PROGRAM}^--function=add^--device=local-task?spin_us=@V@|spin_us|${common}+2p32"
  "INFO|local-task?workers=@V@|workers|${common}+2p32"
  "INFO|local-task?queues=@V@|queues|${common}+2p32+zero"
  "INFO|local-task?file_io_depth=@V@|file_io_depth|${common}+2p32"
)
# Ids out of the model's vocabulary (512 ids) and text after a list.
list(APPEND extra_rows
  "DECODE|--model=${model}^--stop=512|--stop"
  "DECODE|--model=${model}^--warmup=101|--warmup"
  "DECODE|--model=${model}^--prompt-ids=1,512|--prompt-ids"
  "DECODE|--model=${model}^--prompt-ids=1,2,|--prompt-ids"
  "DECODE|--model=${model}^--prompt-ids=,1|--prompt-ids"
  "DECODE|--model=${model}^--stop=1,,2|--stop"
  "DECODE|--model=${model}^--temperature=inf|--temperature"
  "DECODE|--model=${model}^--temperature=nan|--temperature"
  "DECODE|--model=${model}^--top-p=1e40|--top-p"
  "RUN|--module=${PROGRAM}^--module=${PROGRAM}^--function=add|--module"
  "RUN|--module=${PROGRAM}^--function=add^--device=local-sync^--device=local-task|--device"
  "INFO|local-task^local-sync|local-sync"
)

set(checked 0)
set(failures "")
function(expect_usage tool_var arguments flag)
  set(tool ${${tool_var}})
  string(REPLACE "^" ";" argv "${arguments}")
  execute_process(COMMAND ${tool} ${argv} RESULT_VARIABLE code
                  OUTPUT_VARIABLE out ERROR_VARIABLE err)
  string(FIND "${err}" "${flag}" at)
  if(NOT code STREQUAL "2" OR at EQUAL -1)
    set(failures "${failures}\n${tool_var} ${arguments}: exit '${code}', "
                 "stderr '${err}' (expected 2 and '${flag}')" PARENT_SCOPE)
  endif()
  math(EXPR n "${checked} + 1")
  set(checked ${n} PARENT_SCOPE)
endfunction()

foreach(row IN LISTS rows)
  string(REPLACE "|" ";" fields "${row}")
  list(GET fields 0 tool_var)
  list(GET fields 1 arguments)
  list(GET fields 2 flag)
  list(GET fields 3 value_names)
  string(REPLACE "+" ";" values "${value_names}")
  if(NOT ${tool_var})
    continue()
  endif()
  foreach(name IN LISTS values)
    set(value "${v_${name}}")
    # @Vx4@: the value as a tensor's first dimension ("-1x4xf32").
    string(REPLACE "@Vx4@" "${value}x4x" with "${arguments}")
    string(REPLACE "@V@" "${value}" with "${with}")
    string(REPLACE "@Vx4@" "${value}x4x" named "${flag}")
    expect_usage(${tool_var} "${with}" "${named}")
  endforeach()
endforeach()
foreach(row IN LISTS extra_rows)
  string(REPLACE "|" ";" fields "${row}")
  list(GET fields 0 tool_var)
  list(GET fields 1 arguments)
  list(GET fields 2 flag)
  if(${tool_var})
    expect_usage(${tool_var} "${arguments}" "${flag}")
  endif()
endforeach()

# A count in range that passes the context is the model's error (exit 1,
# OUT_OF_RANGE), never a wrapped count and a crash: the prompt and the
# steps add up in 64 bits.
if(DECODE)
  foreach(steps 4294967295 4294967294 4294967293)
    foreach(prompt "--prompt-ids=1,2" "--prompt=Once upon a time")
      execute_process(COMMAND ${DECODE} --model=${model} ${prompt}
                              --steps=${steps}
                      RESULT_VARIABLE code OUTPUT_VARIABLE out
                      ERROR_VARIABLE err)
      if(NOT code STREQUAL "1" OR NOT err MATCHES
         "OUT_OF_RANGE: [0-9]+ prompt tokens and ${steps} steps pass the model's context of 64")
        set(failures "${failures}\n--steps=${steps} ${prompt}: exit "
                     "'${code}', stderr '${err}'")
      endif()
      math(EXPR checked "${checked} + 1")
    endforeach()
  endforeach()
endif()

if(failures)
  message(FATAL_ERROR "of ${checked} bad command lines:${failures}")
endif()
if(checked LESS 20)
  message(FATAL_ERROR "only ${checked} command lines checked")
endif()
message(STATUS "${checked} bad command lines refused")
