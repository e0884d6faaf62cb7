//go:build linux

package kernelbuild

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// importTarball makes a git repository of a kernel source tarball, as
// Debian's linux-source-6.1 installs one (/usr/src/linux-source-6.1.tar.xz),
// so that a tarball builds as a commit does: CACHE/src/SUM/NAME, one commit
// of every file (forced past the tarball's own .gitignore, whose Debian
// form ignores everything), made once and found again by the tarball's
// SHA-256. It returns the repository's directory.
func importTarball(tarball, cache string) (string, error) {
	f, err := os.Open(tarball)
	if err != nil {
		return "", fmt.Errorf("-tree: %v", err)
	}
	h := sha256.New()
	_, err = io.Copy(h, f)
	f.Close()
	if err != nil {
		return "", fmt.Errorf("-tree %s: %v", tarball, err)
	}
	name := filepath.Base(tarball)
	name = name[:strings.Index(name, ".tar")]
	// NAME as the tarball's top directory is usually called, so that the
	// checkout's path, and ccache's hits, are those of an unpacked tree.
	repo := filepath.Join(cache, "src", hex.EncodeToString(h.Sum(nil))[:12], name)
	if _, err := os.Stat(filepath.Join(repo, ".git")); err == nil {
		return repo, nil
	}
	if err := os.MkdirAll(filepath.Dir(repo), 0o777); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(repo), "import-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	if out, err := exec.Command("tar", "-xf", tarball, "-C", tmp).CombinedOutput(); err != nil {
		return "", fmt.Errorf("-tree %s: tar: %v: %s", tarball, err, out)
	}
	top := tmp // the tarball's one top directory, if it has one
	if ents, _ := os.ReadDir(tmp); len(ents) == 1 && ents[0].IsDir() {
		top = filepath.Join(tmp, ents[0].Name())
	}
	if _, err := os.Stat(filepath.Join(top, "Makefile")); err != nil {
		return "", fmt.Errorf("-tree %s: no kernel Makefile in the tarball: want a kernel source tarball", tarball)
	}
	id := []string{"-c", "user.name=kbuild", "-c", "user.email=kbuild@localhost"}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A", "-f"}, append(id, "commit", "-q", "-m", "import "+filepath.Base(tarball))} {
		if _, err := git(top, args...); err != nil {
			return "", fmt.Errorf("-tree %s: %v", tarball, err)
		}
	}
	if err := os.Rename(top, repo); err != nil {
		return "", err
	}
	return repo, nil
}
