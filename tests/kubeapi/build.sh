#!/usr/bin/env bash
# Build the test API server (kube-apiserver + embedded etcd) used by the
# integration tests. Rebuilds only when go.mod, go.sum or a .go file changed
# since the last build (or the Go version changed). Prints the binary path.
set -euo pipefail

src_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo_dir="$(cd "${src_dir}/../.." && pwd)"
bin="${KUBEAPI_BIN:-${repo_dir}/var/bin/kubeapi-server}"
stamp="${bin}.sha256"

go_cmd="$(command -v go || true)"
if [[ -z "${go_cmd}" && -x /usr/local/go/bin/go ]]; then
    go_cmd=/usr/local/go/bin/go
fi
if [[ -z "${go_cmd}" ]]; then
    echo "build.sh: the 'go' command was not found (need Go >= 1.25 on PATH or in /usr/local/go/bin) to build the test kube-apiserver" >&2
    exit 1
fi

# Report the Kubernetes release the binary is built from in /version.
kube_version="$(awk '$1 == "k8s.io/kubernetes" && $2 ~ /^v1\./ { print $2; exit }' "${src_dir}/go.mod")"
if [[ ! "${kube_version}" =~ ^v1\.([0-9]+)\. ]]; then
    echo "build.sh: cannot find the k8s.io/kubernetes version in ${src_dir}/go.mod" >&2
    exit 1
fi
kube_minor="${BASH_REMATCH[1]}"
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X ${pkg}.gitVersion=${kube_version} -X ${pkg}.gitMajor=1 -X ${pkg}.gitMinor=${kube_minor}"
    ldflags+=" -X ${pkg}.gitTreeState=clean"
done

hash="$(
    cd "${src_dir}"
    {
        "${go_cmd}" version
        printf '%s\n' "${ldflags}"
        # shellcheck disable=SC2012
        for f in build.sh go.mod go.sum $(ls ./*.go | LC_ALL=C sort); do
            printf '%s\n' "${f}"
            cat "${f}"
        done
    } | sha256sum | cut -d' ' -f1
)"

if [[ -x "${bin}" && -f "${stamp}" && "$(cat "${stamp}")" == "${hash}" ]]; then
    echo "build.sh: ${bin} is up to date" >&2
    printf '%s\n' "${bin}"
    exit 0
fi

mkdir -p "$(dirname "${bin}")"
tmp="${bin}.tmp.$$"
trap 'rm -f "${tmp}"' EXIT
echo "build.sh: building ${bin} (the first build takes several minutes; later ones use the Go build cache)" >&2
start=${SECONDS}
(cd "${src_dir}" && "${go_cmd}" build -trimpath -buildvcs=false -ldflags="${ldflags}" -o "${tmp}" .)
mv -f "${tmp}" "${bin}"
printf '%s\n' "${hash}" >"${stamp}"
echo "build.sh: built ${bin} in $((SECONDS - start))s" >&2
printf '%s\n' "${bin}"
