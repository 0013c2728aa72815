# Runs tdfx-cli as a user would and checks its exact output and exit codes.
# -DCLI=path/to/tdfx-cli -DFIXTURES=dir -DEXPECTED=dir -DWORK=scratch-dir
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
foreach(name seed_module seed_sequential)
  execute_process(COMMAND ${CLI} trace ${FIXTURES}/${name}.pt
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  file(READ ${EXPECTED}/${name}.txt expected)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "tdfx-cli trace ${name}: exit ${rc}: ${err}")
  endif()
  if(NOT out STREQUAL expected)
    message(FATAL_ERROR "tdfx-cli trace ${name}: output differs from fx-format.md\n--- got\n${out}\n--- expected\n${expected}")
  endif()
endforeach()

execute_process(COMMAND ${CLI} trace --graph ${FIXTURES}/seed_module.pt OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR out MATCHES "def forward" OR NOT out MATCHES "^graph\\(\\):")
  message(FATAL_ERROR "--graph should print only the graph:\n${out}")
endif()
execute_process(COMMAND ${CLI} trace --code ${FIXTURES}/seed_module.pt OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR out MATCHES "placeholder" OR NOT out MATCHES "def forward")
  message(FATAL_ERROR "--code should print only the code:\n${out}")
endif()

# Where the graph follows code torch.fx does not run (the is_scripting() side the archive holds),
# trace says so on stderr, once per function, and still prints the graph (exit 0); in --out-dir too.
execute_process(COMMAND ${CLI} trace --code ${FIXTURES}/scripting_outputs.pt OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT out MATCHES "return \\(fc, None\\)" OR
   NOT err MATCHES "tdfx-cli: note: [^\n]*scripting_outputs.pt: [^\n]*ScriptingOutputs.forward: torch.fx runs the Python side of `if torch.jit.is_scripting\\(\\):` \\(`else: return self.eager_outputs\\(x, aux\\)`\\)")
  message(FATAL_ERROR "is_scripting note: exit ${rc}\nstdout: ${out}\nstderr: ${err}")
endif()
execute_process(COMMAND ${CLI} trace --out-dir ${WORK}/noted ${FIXTURES}/scripting_outputs.pt ${FIXTURES}/seed_module.pt
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
string(REGEX MATCHALL "tdfx-cli: note: " notes "${err}")
list(LENGTH notes count)
if(NOT rc EQUAL 0 OR NOT count EQUAL 1 OR NOT err MATCHES "scripting_outputs.pt: [^\n]*eager_outputs")
  message(FATAL_ERROR "is_scripting note in --out-dir: exit ${rc}, ${count} notes\nstderr: ${err}")
endif()

# Number flags (issue 35, finding 11): NaN and infinity are refused in one plain line, before any
# work (--atol nan reached the worker as JSON null and exited 2 with a json exception).
foreach(flags "verify;--atol;nan" "verify;--rtol;inf" "verify;--atol;-1" "trace;--timeout;nan" "trace;--memory-limit;inf")
  list(GET flags 0 cmd)
  list(GET flags 1 flag)
  list(GET flags 2 value)
  execute_process(COMMAND ${CLI} ${cmd} ${FIXTURES}/adds_to_input.pt ${flag} ${value}
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(rc EQUAL 0 OR rc EQUAL 2 OR NOT err MATCHES "^${flag}: a finite number [^\n]* is expected, not '${value}'\n" OR
     err MATCHES "json|[0-9]{20}")
    message(FATAL_ERROR "${cmd} ${flag} ${value}: exit ${rc}, stderr: ${err}")
  endif()
endforeach()

# TorchScript export (issue 35, findings 6 and 12): keys that flatten alike are refused in one line
# and nothing is written; keys with a newline or other control characters export as they are.
foreach(case "flattened_alike_in;in key 'a\\.b' and key \\('a', 'b'\\) both become 'a\\.b'"
             "flattened_alike_out;out key 'o\\.p' and key \\('o', 'p'\\) both become 'o\\.p'")
  list(GET case 0 name)
  list(GET case 1 expected)
  execute_process(COMMAND ${CLI} export ${FIXTURES}/${name}.pt -o ${WORK}/${name}_ts.pt
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  string(REGEX MATCHALL "\n" newlines "${err}")
  list(LENGTH newlines lines)
  if(rc EQUAL 0 OR NOT err MATCHES "${expected}" OR NOT lines EQUAL 1 OR EXISTS ${WORK}/${name}_ts.pt)
    message(FATAL_ERROR "export ${name}.pt to TorchScript: exit ${rc}, ${lines} line(s): ${err}")
  endif()
endforeach()
execute_process(COMMAND ${CLI} export ${FIXTURES}/control_char_keys.pt -o ${WORK}/control_char_keys_ts.pt
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT EXISTS ${WORK}/control_char_keys_ts.pt)
  message(FATAL_ERROR "export control_char_keys.pt to TorchScript: exit ${rc}: ${err}")
endif()

# A parameter literally named "a.b" read beside submodule a's b (issue 35, finding 5): one get_attr
# `a.b` would print, and run, the other tensor; trace refuses it in one line.
execute_process(COMMAND ${CLI} trace ${FIXTURES}/dotted_name.pt OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
string(REGEX MATCHALL "\n" newlines "${err}")
list(LENGTH newlines lines)
if(rc EQUAL 0 OR NOT lines EQUAL 1 OR NOT out STREQUAL "" OR
   NOT err MATCHES "attribute 'a\\.b' has a '\\.' in its name, so a dotted target cannot tell it from 'a''s 'b'")
  message(FATAL_ERROR "trace dotted_name.pt: exit ${rc}, ${lines} line(s)\nstdout: ${out}\nstderr: ${err}")
endif()

# Errors: a clear message on stderr and a non-zero exit.
execute_process(COMMAND ${CLI} trace ${FIXTURES}/no-such-model.pt OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(rc EQUAL 0 OR NOT err MATCHES "no-such-model.pt: no such file")
  message(FATAL_ERROR "missing file: exit ${rc}, stderr: ${err}")
endif()
execute_process(COMMAND ${CLI} trace ${FIXTURES} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(rc EQUAL 0 OR NOT err MATCHES "is a directory")
  message(FATAL_ERROR "directory: exit ${rc}, stderr: ${err}")
endif()
execute_process(COMMAND ${CLI} frobnicate OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(rc EQUAL 0)
  message(FATAL_ERROR "an unknown subcommand must fail")
endif()

# verify: exit 0 with a report on the seed examples, 3 when outputs differ, 1 on bad input.
foreach(name seed_module seed_sequential)
  execute_process(COMMAND ${CLI} verify ${FIXTURES}/${name}.pt OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "PASSED: traced outputs match eager outputs")
    message(FATAL_ERROR "verify ${name}: exit ${rc}\n${out}${err}")
  endif()
endforeach()
# Random ops: both passes are seeded alike and agree; unseeded, the generator's state is restored
# before each pass and they agree too. A printout that is not what the code runs fails, exit 3.
execute_process(COMMAND ${CLI} verify ${FIXTURES}/noisy.pt OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT out MATCHES "PASSED")
  message(FATAL_ERROR "verify noisy.pt (seeded) should pass: exit ${rc}\n${out}")
endif()
execute_process(COMMAND ${CLI} verify ${FIXTURES}/noisy.pt --no-random-seed OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT out MATCHES "PASSED")
  message(FATAL_ERROR "verify noisy.pt --no-random-seed should pass: exit ${rc}\n${out}")
endif()
execute_process(COMMAND ${CLI} verify ${FIXTURES}/updates_buffer_once.pt OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 3 OR NOT out MATCHES "first difference: node 'count'")
  message(FATAL_ERROR "verify updates_buffer_once.pt should fail with exit 3 and name the node: exit ${rc}\n${out}")
endif()
# A model's print() goes to stderr: --json's stdout is JSON alone.
execute_process(COMMAND ${CLI} verify ${FIXTURES}/chatty.pt --json OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT out MATCHES "^{" OR out MATCHES "hello from the model" OR NOT err MATCHES "hello from the model")
  message(FATAL_ERROR "verify chatty.pt --json: exit ${rc}\nstdout:\n${out}\nstderr:\n${err}")
endif()
execute_process(COMMAND ${CLI} verify ${FIXTURES}/noisy.pt --no-random-seed --atol 3 --json OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT out MATCHES "\"passed\": true")
  message(FATAL_ERROR "verify --atol 3 --json: exit ${rc}\n${out}")
endif()
execute_process(COMMAND ${CLI} verify ${FIXTURES}/plain.pt OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 1 OR NOT err MATCHES "--input x=SHAPE")
  message(FATAL_ERROR "verify plain.pt without --input: exit ${rc}\n${err}")
endif()
execute_process(COMMAND ${CLI} verify ${FIXTURES}/plain.pt --input x=4x8 --seed 3 OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "verify plain.pt --input x=4x8: exit ${rc}\n${out}")
endif()
execute_process(COMMAND ${CLI} verify ${FIXTURES}/seed_sequential.pt --input input.x=32x99 OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 1 OR NOT err MATCHES "failed on these inputs")
  message(FATAL_ERROR "verify with a wrong shape: exit ${rc}\n${err}")
endif()
execute_process(COMMAND ${CLI} trace --shapes --graph ${FIXTURES}/seed_sequential.pt OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT out MATCHES "%_0_fc1 : \\[#users=1\\] = call_module\\[target=0.module.fc1\\]\\(args = \\(%getitem,\\), kwargs = {}\\)  # float32\\[32, 50\\]")
  message(FATAL_ERROR "trace --shapes:\n${out}")
endif()

# export: every format, both styles; DOT re-readable by dot, SVG valid XML, errors clear.
foreach(out seed.svg seed.dot seed.png seed.pdf)
  execute_process(COMMAND ${CLI} export ${FIXTURES}/seed_sequential.pt -o ${WORK}/${out} --style fx RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT EXISTS ${WORK}/${out})
    message(FATAL_ERROR "export ${out}: exit ${rc}: ${err}")
  endif()
endforeach()
execute_process(COMMAND ${CLI} export ${FIXTURES}/scoped.pt -o ${WORK}/scoped.svg --expand-all --shapes --rankdir LR RESULT_VARIABLE rc)
execute_process(COMMAND xmllint --noout ${WORK}/seed.svg ${WORK}/scoped.svg RESULT_VARIABLE xml)
execute_process(COMMAND dot -Tsvg -o ${WORK}/redrawn.svg ${WORK}/seed.dot RESULT_VARIABLE redraw)
if(NOT rc EQUAL 0 OR NOT xml EQUAL 0 OR NOT redraw EQUAL 0)
  message(FATAL_ERROR "export: exit ${rc}, xmllint ${xml}, dot ${redraw}")
endif()
execute_process(COMMAND ${CLI} export ${FIXTURES}/seed_sequential.pt -o ${WORK}/x.jpeg ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 1 OR NOT err MATCHES "unknown export format")
  message(FATAL_ERROR "export to .jpeg: exit ${rc}: ${err}")
endif()
execute_process(COMMAND ${CLI} export ${FIXTURES}/seed_sequential.pt -o ${WORK}/no/such/dir/x.svg ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 1 OR NOT err MATCHES "cannot write in")
  message(FATAL_ERROR "export to a missing folder: exit ${rc}: ${err}")
endif()
execute_process(COMMAND ${CLI} export ${FIXTURES}/seed_sequential.pt -o ${WORK}/y.svg --depth 1 --expand-all ERROR_VARIABLE err RESULT_VARIABLE rc)
if(rc EQUAL 0)
  message(FATAL_ERROR "--depth with --expand-all must be refused")
endif()
# An export never overwrites the model it reads.
file(COPY ${FIXTURES}/seed_module.pt DESTINATION ${WORK})
file(RENAME ${WORK}/seed_module.pt ${WORK}/model.svg)
file(SHA256 ${WORK}/model.svg before)
execute_process(COMMAND ${CLI} export ${WORK}/model.svg -o ${WORK}/./model.svg ERROR_VARIABLE err RESULT_VARIABLE rc)
file(SHA256 ${WORK}/model.svg after)
if(NOT rc EQUAL 1 OR NOT err MATCHES "names the model file itself" OR NOT before STREQUAL after)
  message(FATAL_ERROR "export -o onto the model: exit ${rc}: ${err}")
endif()
# Input shapes past the input budget are one clear line, never an allocation or an overflow.
foreach(shape 500000000x4 4294967296x4294967296x4)
  execute_process(COMMAND ${CLI} verify ${FIXTURES}/plain.pt --input x=${shape} ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 1 OR NOT err MATCHES "the most tdfx allocates for a model's inputs")
    message(FATAL_ERROR "verify --input x=${shape}: exit ${rc}: ${err}")
  endif()
endforeach()
# A picture more than twice the 16384 px a side image tools take is refused (Graphviz would scale it down to a smear and succeed);
# SVG takes it.
execute_process(COMMAND ${CLI} export ${FIXTURES}/wide.pt -o ${WORK}/wide.png ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 1 OR NOT err MATCHES "more than twice the 16384 px a side that image tools take" OR EXISTS ${WORK}/wide.png)
  message(FATAL_ERROR "export wide.png: exit ${rc}: ${err}")
endif()
execute_process(COMMAND ${CLI} export ${FIXTURES}/wide.pt -o ${WORK}/wide.svg ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "export wide.svg: exit ${rc}: ${err}")
endif()
# A NUL inside a key is drawn as U+2400, never cutting the label (two such keys stay two nodes).
execute_process(COMMAND ${CLI} export ${FIXTURES}/nul_key.pt -o ${WORK}/nul.svg ERROR_VARIABLE err RESULT_VARIABLE rc)
file(READ ${WORK}/nul.svg svg)
if(NOT rc EQUAL 0 OR NOT svg MATCHES "nul␀key" OR NOT svg MATCHES "nul␀other")
  message(FATAL_ERROR "export nul.svg: exit ${rc}: ${err}")
endif()

# trace --out-dir: many models in one process; each model's files equal what `trace` prints alone,
# a model that fails leaves NAME.error.txt and exit 1, the others are still traced.
file(WRITE ${WORK}/batch/no-such-model.graph.txt "stale: removed before the run")
file(WRITE ${WORK}/list.txt "${FIXTURES}/seed_sequential.pt\n${FIXTURES}/no-such-model.pt\n")
execute_process(COMMAND ${CLI} trace --out-dir ${WORK}/batch ${FIXTURES}/seed_module.pt --from ${WORK}/list.txt --verify
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 1 OR NOT out MATCHES "traced 2 of 3 models" OR NOT err MATCHES "no-such-model.pt: no such file")
  message(FATAL_ERROR "trace --out-dir with a missing model: exit ${rc}\nstdout:\n${out}\nstderr:\n${err}")
endif()
foreach(name seed_module seed_sequential)
  file(READ ${WORK}/batch/${name}.graph.txt graph)
  file(READ ${WORK}/batch/${name}.code.txt code)
  file(READ ${EXPECTED}/${name}.txt expected)
  if(NOT "${graph}\n${code}" STREQUAL expected)
    message(FATAL_ERROR "trace --out-dir ${name}: the files differ from `trace`'s output\n--- got\n${graph}\n${code}")
  endif()
  file(READ ${WORK}/batch/${name}.verify.txt report)
  if(NOT report MATCHES "PASSED")
    message(FATAL_ERROR "trace --out-dir --verify ${name}: ${report}")
  endif()
endforeach()
file(READ ${WORK}/batch/no-such-model.error.txt error)
if(NOT error MATCHES "no such file" OR EXISTS ${WORK}/batch/no-such-model.graph.txt)
  message(FATAL_ERROR "trace --out-dir: the missing model's error file says: ${error}")
endif()
execute_process(COMMAND ${CLI} trace --out-dir ${WORK}/batch2 ${FIXTURES}/seed_module.pt ${FIXTURES}/seed_module.pt
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 1 OR NOT err MATCHES "two models are named seed_module" OR EXISTS ${WORK}/batch2/seed_module.graph.txt)
  message(FATAL_ERROR "trace --out-dir with one model twice must be refused before any work: exit ${rc}\n${err}")
endif()
execute_process(COMMAND ${CLI} trace ${FIXTURES}/seed_module.pt ${FIXTURES}/seed_sequential.pt
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 1 OR NOT err MATCHES "several are traced with --out-dir")
  message(FATAL_ERROR "trace with two models and no --out-dir: exit ${rc}\n${err}")
endif()

# A graph that keeps Graphviz's dot busy for minutes (issue 22): --timeout stops the layout
# process; an SVG is then drawn from the layered layout, a PNG fails and leaves the file alone.
execute_process(COMMAND ${CLI} --timeout 5 export ${FIXTURES}/dense_layout.pt -o ${WORK}/dense.svg
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT err MATCHES "tdfx-cli: note: dot did not finish within 5 s: a simpler layered layout was drawn"
   OR NOT out MATCHES "wrote .*dense.svg \\(3001 nodes, 5991 edges")
  message(FATAL_ERROR "export dense_layout.pt to SVG within 5 s: exit ${rc}\nstdout:\n${out}\nstderr:\n${err}")
endif()
file(READ ${WORK}/dense.svg svg LIMIT 64)
if(NOT svg MATCHES "^<\\?xml")
  message(FATAL_ERROR "dense.svg is no SVG: ${svg}")
endif()
file(WRITE ${WORK}/dense.png "mine")
execute_process(COMMAND ${CLI} --timeout 5 export ${FIXTURES}/dense_layout.pt -o ${WORK}/dense.png
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
file(READ ${WORK}/dense.png png)
if(NOT rc EQUAL 1 OR NOT err MATCHES "render did not finish within 5 s \\(the time limit; --timeout\\); the layout process was stopped"
   OR NOT png STREQUAL "mine")
  message(FATAL_ERROR "export dense_layout.pt to PNG within 5 s: exit ${rc}, file '${png}'\nstderr:\n${err}")
endif()

# Text from a model reaches the terminal shown, not obeyed (issue 22, findings 2 and 4): what it
# prints, and an error naming markup and escapes, have their control characters escaped; a 30 MB
# error is cut to its first 4 KB with the byte count of the rest.
string(ASCII 27 esc)
execute_process(COMMAND ${CLI} verify ${FIXTURES}/chatty.pt OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT err MATCHES "hello from the model \\\\x1b\\[31mred\\\\x1b\\[2J" OR err MATCHES "${esc}")
  message(FATAL_ERROR "verify chatty.pt: the model's escapes must be shown escaped: exit ${rc}\nstderr:\n${err}")
endif()
execute_process(COMMAND /usr/bin/python3 ${SCRIPTS}/make_hostile_text.py ${FIXTURES}/seed_sequential.pt ${WORK}/text RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "make_hostile_text.py failed: ${rc}")
endif()
execute_process(COMMAND ${CLI} trace ${WORK}/text/markup_error.pt OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 1 OR err MATCHES "${esc}"
   OR NOT err MATCHES "path \"<h1 style=color:red>owned</h1><a href=https://example.com>click</a>\\\\x1b\\[31mred\\\\x1b\\[0m\\\\x1b\\[2J\"")
  message(FATAL_ERROR "trace markup_error.pt: exit ${rc}\nstderr:\n${err}")
endif()
execute_process(COMMAND ${CLI} trace ${WORK}/text/long_error.pt OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
string(LENGTH "${err}" length)
if(NOT rc EQUAL 1 OR length GREATER 4200 OR NOT err MATCHES "… \\[3145[0-9]+ more bytes\\]\n$")
  message(FATAL_ERROR "trace long_error.pt: exit ${rc}, ${length} bytes on stderr, ending: ${err}")
endif()
file(REMOVE_RECURSE ${WORK}/text)

# A model whose code reads a file of the user's (issue 22, finding 5): once the model file is read
# the worker opens no file, so verify and a run fail with the sandbox named, and no byte of the
# file reaches any output.
file(WRITE ${WORK}/secret.txt "TOPSECRET-0123456789")
execute_process(COMMAND /usr/bin/python3 ${SCRIPTS}/make_file_reader.py ${WORK}/secret.txt ${WORK}/reader.pt RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "make_file_reader.py failed: ${rc}")
endif()
execute_process(COMMAND ${CLI} verify ${WORK}/reader.pt --input x=16 OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 1 OR NOT err MATCHES "unable to open file <.*secret.txt> in read-only mode: Operation not permitted"
   OR NOT err MATCHES "the model worker's sandbox refuses this" OR "${out}${err}" MATCHES "TOPSECRET|84, 79, 80")
  message(FATAL_ERROR "verify reader.pt: exit ${rc}\nstdout:\n${out}\nstderr:\n${err}")
endif()
execute_process(COMMAND ${CLI} export ${WORK}/reader.pt --shapes --input x=16 -o ${WORK}/reader.json
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 1 OR EXISTS ${WORK}/reader.json OR "${out}${err}" MATCHES "TOPSECRET|84, 79, 80")
  message(FATAL_ERROR "export --shapes reader.pt: exit ${rc}\nstdout:\n${out}\nstderr:\n${err}")
endif()
# The same read in __setstate__, which TorchScript runs while it loads the archive (issue 35,
# finding 1): the worker opens the file, seals, then deserialises, so the read is refused too.
execute_process(COMMAND /usr/bin/python3 ${SCRIPTS}/make_file_reader.py --at-load ${WORK}/secret.txt ${WORK}/reader_at_load.pt
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "make_file_reader.py --at-load failed: ${rc}")
endif()
foreach(cmd "trace" "verify" "export;-o;${WORK}/reader_at_load.svg")
  execute_process(COMMAND ${CLI} ${cmd} ${WORK}/reader_at_load.pt OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  # One line: where the model's code failed and why, not LibTorch's two 10-line tracebacks.
  if(NOT rc EQUAL 1 OR NOT err MATCHES "^tdfx-cli: error: [^\n]*reader_at_load.pt: cannot load as TorchScript: the model's code failed while the archive was loaded \\(__setstate__ at [^\n]*reader.py:[0-9]+\\): RuntimeError: unable to open file <[^\n]*secret.txt> in read-only mode: Operation not permitted [^\n]*sandbox refuses this[^\n]*\n$"
     OR EXISTS ${WORK}/reader_at_load.svg OR "${out}${err}" MATCHES "TOPSECRET|leaked|84, 79, 80")
    message(FATAL_ERROR "${cmd} reader_at_load.pt: exit ${rc}\nstdout:\n${out}\nstderr:\n${err}")
  endif()
endforeach()

# --max-nodes (issue 35, finding 15): a picture over the limit is refused before Graphviz runs, in
# one line naming the depth that fits, and nothing is written; under it, the picture is drawn.
execute_process(COMMAND ${CLI} export ${FIXTURES}/seed_sequential.pt -o ${WORK}/limited.svg --expand-all --max-nodes 3
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 1 OR EXISTS ${WORK}/limited.svg OR
   NOT err STREQUAL "tdfx-cli: error: the drawing has 9 nodes, over --max-nodes 3; even --depth 0 draws 6 (.json and .pt outputs have no limit)\n")
  message(FATAL_ERROR "export --max-nodes 3: exit ${rc}\nstdout:\n${out}\nstderr:\n${err}")
endif()
execute_process(COMMAND ${CLI} export ${FIXTURES}/seed_sequential.pt -o ${WORK}/limited.svg --expand-all --max-nodes 7
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 1 OR NOT err MATCHES "over --max-nodes 7; --depth 0 draws 6 ")
  message(FATAL_ERROR "export --max-nodes 7: exit ${rc}\nstdout:\n${out}\nstderr:\n${err}")
endif()
execute_process(COMMAND ${CLI} export ${FIXTURES}/seed_sequential.pt -o ${WORK}/limited.svg --expand-all --max-nodes 9
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT EXISTS ${WORK}/limited.svg)
  message(FATAL_ERROR "export --max-nodes 9: exit ${rc}\nstdout:\n${out}\nstderr:\n${err}")
endif()
