while [ $# -gt 0 ]; do case $1 in -m) shift;; -O) out=$2; shift 2;; *) break;; esac; done
cat "$@" | awk -F= '/^CONFIG_/{k=$1; if(!(k in v)) ord[++n]=k; v[k]=$0} END{for(i=1;i<=n;i++) print v[ord[i]]}' > "$out/.m" && mv "$out/.m" "$out/.config"
