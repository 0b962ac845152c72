// Command kubetest2-ccm-harness is the harness's kubetest2 deployer:
// `kubetest2 ccm-harness --build --up --test=ginkgo --down -- ...` runs it.
package main

import (
	"sigs.k8s.io/kubetest2/pkg/app"

	"sigs.k8s.io/ccm-harness/kubetest2-deployer/deployer"
)

func main() { app.Main(deployer.Name, deployer.New) }
