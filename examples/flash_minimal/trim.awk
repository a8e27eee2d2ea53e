# Keeps flash.cu's kernel (from "__global__" to the closing brace at column
# 0), unedited, without the PyTorch host code that needs torch headers.
/^__global__/ { keep = 1 }
keep { print }
keep && /^}/ { exit }
