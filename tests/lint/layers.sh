# Layers of src/ (docs/testing.md, "Lints"):
#  1. no cycle among the files of src/: file A depends on file B when A's
#     object uses a global that B's object defines (nm of the built objects,
#     src/FOLDER/FILE.o), or when A includes B, a header of another folder of
#     src/ ("core/h5io.h"); a cycle means neither file can be read, tested
#     or replaced without the other;
#  2. no kernel (src/*/*_kernel*.c: pure computation) sees <mpi.h>, directly
#     or through the headers it includes (the compiler's dependency file,
#     src/FOLDER/.deps/FILE.Plo);
#  3. no report (src/*/*_report*.c: tables, markdown, figures of totals the
#     stage has reduced) calls MPI (no MPI_ symbol in its object) or includes
#     <mpi.h> itself.
set -u
: "${TOP_SRCDIR:?}" "${TOP_BUILDDIR:?}"

fails=0

# ---- 1. cycles: "DEF SYM NODE", "USE NODE SYM" and "INC NODE NODE" lines to awk,
# which prints each strongly connected component of two or more files as
# "SCC a b c" followed by its edges, "EDGE a b why".
graph() {
  local obj node
  for obj in "$TOP_BUILDDIR"/src/*/*.o; do
    [ -f "$obj" ] || continue
    node=${obj#"$TOP_BUILDDIR"/src/}
    node=${node%.o}
    [ -f "$TOP_SRCDIR/src/$node.c" ] || continue # left by an earlier build of this tree
    # (.gomp_critical_user_*: the lock of a named OpenMP critical section, not a dependency)
    nm "$obj" | awk -v node="$node" '$NF ~ /^\.gomp_critical_user_/ { next }
      NF == 3 && $2 ~ /^[TDRBCV]$/ { print "DEF", $3, node } NF == 2 && $1 == "U" { print "USE", node, $2 }'
  done
  local f inc folder
  for f in "$TOP_SRCDIR"/src/*/*.c "$TOP_SRCDIR"/src/*/*.h; do
    [ -f "$f" ] || continue
    node=${f#"$TOP_SRCDIR"/src/}
    folder=${node%%/*}
    node=${node%.*}
    for inc in $(sed -n 's|^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([a-z_]*/[a-z0-9_]*\)\.h".*|\1|p' "$f"); do
      [ -f "$TOP_SRCDIR/src/$inc.h" ] && [ "${inc%%/*}" != "$folder" ] && echo "INC $node $inc"
    done
  done
}

sccs=$(graph | awk '
  $1 == "DEF" { def[$2] = $3; next }
  $1 == "USE" { use[++nu] = $2 SUBSEP $3; next }
  $1 == "INC" { add($2, $3, "#include \"" $3 ".h\"") }
  function add(a, b, why) {
    if (a == b || ((a, b) in edge)) return
    edge[a, b] = why
    id(a); id(b)
    reach[idx[a], idx[b]] = 1
  }
  function id(v) { if (!(v in idx)) { idx[v] = ++n; name[n] = v } }
  END {
    for (u = 1; u <= nu; u++) {
      split(use[u], p, SUBSEP)
      if (p[2] in def) add(p[1], def[p[2]], "uses " p[2])
    }
    for (k = 1; k <= n; k++)
      for (i = 1; i <= n; i++)
        if ((i, k) in reach)
          for (j = 1; j <= n; j++)
            if ((k, j) in reach) reach[i, j] = 1
    for (i = 1; i <= n; i++) {
      if (i in done || !((i, i) in reach)) continue
      line = "SCC"
      for (j = 1; j <= n; j++)
        if ((i, j) in reach && (j, i) in reach) { done[j] = 1; line = line " " name[j]; member[j] = i }
      print line
      for (a = 1; a <= n; a++)
        for (b = 1; b <= n; b++)
          if (member[a] == i && member[b] == i && ((name[a], name[b]) in edge))
            print "EDGE", name[a], name[b], edge[name[a], name[b]]
    }
  }')

n_scc=0 bad=0
while read -r kind a b why; do
  case "$kind" in
    SCC)
      n_scc=$((n_scc + 1))
      # shellcheck disable=SC2086
      set -- $a $b $why
      echo "not ok - cycle among $* (each depends on the others):"
      fails=$((fails + 1))
      bad=1
      ;;
    EDGE) [ $bad -eq 1 ] && echo "#   src/$a ${why:+$why }(src/$b)" ;;
  esac
done <<EOF
$sccs
EOF
# ---- 2. kernels that see <mpi.h>
# the first headers of src/ or include/ on the way from FILE to <mpi.h> (a hint; the .Plo decides)
through() {
  local f=$1 inc r out=""
  for inc in $(sed -n 's|^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*|\1|p' "$f"); do
    for r in "$(dirname "$f")/$inc" "$TOP_SRCDIR/include/$inc" "$TOP_SRCDIR/src/$inc"; do
      [ -f "$r" ] || continue
      if grep -q '^[[:space:]]*#[[:space:]]*include[[:space:]]*<mpi\.h>' "$r" || [ -n "$(through "$r")" ]; then
        out="$out $inc"
      fi
      break
    done
  done
  echo "${out# }"
}

n_kernels=0 n_unchecked=0
for k in "$TOP_SRCDIR"/src/*/*_kernel*.c; do
  node=${k#"$TOP_SRCDIR"/src/}
  node=${node%.c}
  deps="$TOP_BUILDDIR/src/${node%%/*}/.deps/${node#*/}.Plo"
  if ! grep -q '\.h' "$deps" 2>/dev/null; then
    n_unchecked=$((n_unchecked + 1)) # not built, or built without dependency tracking
    continue
  fi
  n_kernels=$((n_kernels + 1))
  if grep -qE '(^|[[:space:]/])mpi\.h([[:space:]:\\]|$)' "$deps"; then
    echo "not ok - src/$node.c, a kernel, sees <mpi.h> (through $(through "$k")): it may use only pure headers"
    fails=$((fails + 1))
  fi
done

# ---- 3. reports that call MPI
n_reports=0
for r in "$TOP_SRCDIR"/src/*/*_report*.c; do
  node=${r#"$TOP_SRCDIR"/src/}
  node=${node%.c}
  obj="$TOP_BUILDDIR/src/$node.o"
  [ -f "$obj" ] || continue
  n_reports=$((n_reports + 1))
  calls=$(nm "$obj" | awk '$1 == "U" && $2 ~ /^P?MPI_/ { printf " %s", $2 }')
  if [ -n "$calls" ]; then
    echo "not ok - src/$node.c, a report, calls MPI:$calls (the stage reduces; the report formats)"
    fails=$((fails + 1))
  fi
  if grep -q '^[[:space:]]*#[[:space:]]*include[[:space:]]*<mpi\.h>' "$r"; then
    echo "not ok - src/$node.c, a report, includes <mpi.h>"
    fails=$((fails + 1))
  fi
done

echo "# $n_scc cycles, $n_kernels kernels ($n_unchecked without dependency files) and $n_reports reports checked, $fails bad"
[ "$fails" -eq 0 ] && [ "$n_kernels" -gt 0 ] && [ "$n_reports" -gt 0 ]
