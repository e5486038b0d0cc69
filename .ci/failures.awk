# Prints each failed assertion of a raw TAP log with the YAML block tap writes under it (what was
# expected, what was found, where, the diff), after the comments its test wrote (the output of a
# service it started, for example). .ci/run repeats them at the end of its log.
function indent_of(line) { match(line, /^ */); return RLENGTH }
{
  indent = indent_of($0)
  if (in_block) {
    print
    if (indent == block_indent && $0 ~ /^ *\.\.\.$/) in_block = 0
    next
  }
  if (awaiting_yaml) {
    awaiting_yaml = 0
    if ($0 ~ /^ *---$/ && indent > failed_indent) {
      print
      in_block = 1
      block_indent = indent
      next
    }
  }
  if ($0 ~ /^ *not ok / && $0 !~ /# (TODO|SKIP)/) {
    # The last 20 of them: a service's output can be thousands of lines, and all of it is above.
    for (i = (comment_count > 20 ? comment_count - 19 : 1); i <= comment_count; i++) print comments[i]
    comment_count = 0
    print
    failed_indent = indent
    awaiting_yaml = 1
    next
  }
  # A test's comments are kept until one of its assertions passes: then they were not a failure's.
  if ($0 ~ /^ *# / && $0 !~ /^ *# (Subtest|time=|\{ total|No coverage)/) comments[++comment_count] = $0
  else if ($0 ~ /^ *ok /) comment_count = 0
}
