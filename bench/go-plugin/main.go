// The Go baseline of bench row 10: an NRI plugin on NRI's own Go stub that does what the
// plugin envhook is compared with does, reading one env file into the container's env. The env file is named by
// the pod annotation "bench.envhook.io/envfile" (an absolute path); a pod without it gets an
// empty adjustment. Built by bench/go-plugin.mjs from Debian sid's Go and NRI packages.
package main

import (
	"bufio"
	"context"
	"flag"
	"os"
	"strings"

	"github.com/containerd/nri/pkg/api"
	"github.com/containerd/nri/pkg/stub"
)

type plugin struct{}

func (plugin) CreateContainer(_ context.Context, pod *api.PodSandbox, _ *api.Container) (*api.ContainerAdjustment, []*api.ContainerUpdate, error) {
	adjust := &api.ContainerAdjustment{}
	file, ok := pod.GetAnnotations()["bench.envhook.io/envfile"]
	if !ok {
		return adjust, nil, nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		name, value, found := strings.Cut(lines.Text(), "=")
		if !found || name == "" || strings.HasPrefix(name, "#") {
			continue
		}
		adjust.AddEnv(name, strings.Trim(value, "'"))
	}
	return adjust, nil, lines.Err()
}

func main() {
	socket := flag.String("socket", "/var/run/nri/nri.sock", "the runtime's NRI socket")
	flag.Parse()
	s, err := stub.New(plugin{}, stub.WithPluginName("gobench"), stub.WithPluginIdx("50"), stub.WithSocketPath(*socket))
	if err != nil {
		os.Stderr.WriteString("go-plugin: " + err.Error() + "\n")
		os.Exit(1)
	}
	if err := s.Run(context.Background()); err != nil {
		os.Stderr.WriteString("go-plugin: " + err.Error() + "\n")
		os.Exit(1)
	}
}
