// Package testgridjunit checks that the JUnit the harness leaves parses with
// testgrid's own JUnit parser, as testgrid reads it from a Prow build
// folder. It lives beside the job configs because testgrid's module is
// already a dependency here and is none of the harness's.
package testgridjunit
