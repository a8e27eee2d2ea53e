# Keeps, of nvcc's PTX for the whole example, the header, the GemmUniversal
# kernel and the module declarations the kernel names (its shared-memory
# array, assert strings, __assertfail); drops the host-side helpers' kernels
# and their random-number tables, which the kernel never touches.
NR == FNR {
  if (!inside && index($0, ".entry _ZN7cutlass13device_kernel") == 1) inside = 1
  if (inside) {
    body = body $0 "\n"
    depth += gsub(/{/, "{") - gsub(/}/, "}")
    if (depth > 0) opened = 1
    if (opened && depth == 0) inside = 0
  }
  next
}
FNR == 1 { phase = "head" }
phase == "head" { print; if ($0 ~ /^\.address_size/) phase = "decls"; next }
phase == "decls" && index($0, ".entry _ZN7cutlass13device_kernel") == 1 { phase = "kernel" }
phase == "decls" && /^\.visible \.entry|^\.entry|^\.func|^\.visible \.func|^\/\/ \.globl/ { phase = "skip" }
phase == "decls" {
  if (in_extern) { print; if ($0 ~ /^;/) in_extern = 0; next }
  if ($0 ~ /^\.extern \.func/) {
    name = $3
    if (index(body, name)) { print; in_extern = 1 }
    next
  }
  if ($0 ~ /^\.(global|const|extern|shared)/) {
    decl = $0; sub(/ *=.*/, "", decl); sub(/;$/, "", decl); sub(/\[[0-9]*\]$/, "", decl)
    n = split(decl, w, " "); name = w[n]
    if (index(body, name "[") || index(body, name ";") || index(body, name ",") || index(body, name "+") || index(body, name ")")) print
  }
  next
}
phase == "skip" && index($0, ".entry _ZN7cutlass13device_kernel") == 1 { phase = "kernel" }
phase == "kernel" {
  print
  kdepth += gsub(/{/, "{") - gsub(/}/, "}")
  if (kdepth > 0) kopened = 1
  if (kopened && kdepth == 0) phase = "done"
}
