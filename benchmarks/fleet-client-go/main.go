// Command fleet-client-go runs many simulated kube-proxy nodes in one process: per node, its own client-go
// clientset and connection, and the informers kube-proxy v1.36's server.go and node.go start (Services without
// service-proxy-name and without headless ones, EndpointSlices without the headless label, ServiceCIDRs, and this
// node's Node by metadata.name), with kube-proxy's default client settings (protobuf, QPS 5, burst 10). It proxies
// nothing: it only keeps the informers' caches, as the fleet benchmark (benchmarks/fleet.sh) needs to measure what
// such a fleet costs the API server.
//
// It prints "synced SECONDS" once every node's informers have synced, then reads commands from stdin:
// "await NAME" prints "seen NAME SECONDS" once every node's EndpointSlice cache holds a slice named NAME; EOF exits.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

// The labels kube-proxy filters on (k8s.io/kubernetes/pkg/proxy/apis and k8s.io/api/core/v1).
const (
	labelServiceProxyName = "service.kubernetes.io/service-proxy-name"
	labelHeadless         = "service.kubernetes.io/headless"
	resync                = 15 * time.Minute // kube-proxy's default configSyncPeriod; a resync is client-side only
)

type node struct {
	slices discoverylisters.EndpointSliceLister
	synced []cache.InformerSynced
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the kube-proxy user")
	server := flag.String("server", "", "API server URL, replacing the kubeconfig's (the counting relay)")
	nodes := flag.Int("nodes", 100, "simulated nodes")
	prefix := flag.String("node-prefix", "fleet-", "node names are PREFIX0 ... PREFIX<nodes-1>")
	namespace := flag.String("namespace", "", "the namespace whose EndpointSlices 'await' looks in")
	flag.Parse()

	noProxyName, err := labels.NewRequirement(labelServiceProxyName, selection.DoesNotExist, nil)
	check(err)
	noHeadless, err := labels.NewRequirement(labelHeadless, selection.DoesNotExist, nil)
	check(err)
	servicesSelector := labels.NewSelector().Add(*noProxyName).String()
	slicesSelector := labels.NewSelector().Add(*noHeadless).String()

	stop := make(chan struct{})
	start := time.Now()
	all := make([]node, *nodes)
	for i := range all {
		cfg, err := clientcmd.BuildConfigFromFlags(*server, *kubeconfig)
		check(err)
		cfg.ContentType = "application/vnd.kubernetes.protobuf"
		cfg.QPS = 5
		cfg.Burst = 10
		cfg.UserAgent = "fleet-client-go"
		// client-go shares one transport (one HTTP/2 connection) among configs with the same TLS settings; a dialer
		// of its own makes each node's transport its own, as on separate machines.
		cfg.Dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
		client := kubernetes.NewForConfigOrDie(cfg)
		name := fmt.Sprintf("%s%d", *prefix, i)

		plain := informers.NewSharedInformerFactoryWithOptions(client, resync)
		slices := informers.NewSharedInformerFactoryWithOptions(client, resync,
			informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = slicesSelector }))
		services := informers.NewSharedInformerFactoryWithOptions(client, resync,
			informers.WithTweakListOptions(func(o *metav1.ListOptions) {
				o.LabelSelector = servicesSelector
				o.FieldSelector = fields.OneTermNotEqualSelector("spec.clusterIP", v1.ClusterIPNone).String()
			}))
		thisNode := informers.NewSharedInformerFactoryWithOptions(client, resync,
			informers.WithTweakListOptions(func(o *metav1.ListOptions) {
				o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
			}))
		sl := slices.Discovery().V1().EndpointSlices()
		n := node{slices: sl.Lister(), synced: []cache.InformerSynced{
			services.Core().V1().Services().Informer().HasSynced,
			sl.Informer().HasSynced,
			plain.Networking().V1().ServiceCIDRs().Informer().HasSynced,
			thisNode.Core().V1().Nodes().Informer().HasSynced,
		}}
		for _, f := range []informers.SharedInformerFactory{plain, slices, services, thisNode} {
			f.Start(stop)
		}
		all[i] = n
	}
	var wg sync.WaitGroup
	for i := range all {
		wg.Add(1)
		go func(n node) {
			defer wg.Done()
			cache.WaitForCacheSync(stop, n.synced...)
		}(all[i])
	}
	wg.Wait()
	fmt.Printf("synced %.3f\n", time.Since(start).Seconds())

	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		f := strings.Fields(in.Text())
		if len(f) != 2 || f[0] != "await" {
			fmt.Fprintf(os.Stderr, "unknown command %q (expected: await NAME)\n", in.Text())
			continue
		}
		t0 := time.Now()
		for _, n := range all {
			for {
				if _, err := n.slices.EndpointSlices(*namespace).Get(f[1]); err == nil {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
		fmt.Printf("seen %s %.3f\n", f[1], time.Since(t0).Seconds())
	}
	close(stop)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
