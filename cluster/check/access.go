package check

import (
	"fmt"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
)

// applyVerbs are what applying the render takes for each kind it emits: get and create on the
// first apply, patch on the next (kubectl apply and server-side apply patch; a size change patches
// the broker Job), delete when a GitOps engine prunes what left Git or a changed MiniCluster
// renames its Job.
var applyVerbs = []string{"get", "create", "patch", "delete"}

// kindReviews are the access questions for every kind the render emits, in its order.
func kindReviews(r *Render) []Review {
	var out []Review
	for _, o := range r.Objects {
		gvk := o.GetObjectKind().GroupVersionKind()
		plural, _ := meta.UnsafeGuessKindToResource(gvk)
		for _, verb := range applyVerbs {
			q := Review{Verb: verb, Group: gvk.Group, Resource: plural.Resource}
			if !slices.Contains(out, q) {
				out = append(out, q)
			}
		}
	}
	return out
}

// roleReviews are, for each Role the render emits, the rights it grants: Kubernetes lets only an
// identity that holds them create the Role (or one that may escalate roles) and bind it (or one that
// may bind roles).
func roleReviews(r *Render) (grants []Review, fallbacks []Review) {
	for _, o := range r.Objects {
		role, ok := o.(*rbacv1.Role)
		if !ok {
			continue
		}
		for _, rule := range role.Rules {
			names := rule.ResourceNames
			if len(names) == 0 {
				names = []string{""}
			}
			for _, g := range rule.APIGroups {
				for _, res := range rule.Resources {
					for _, verb := range rule.Verbs {
						for _, name := range names {
							q := Review{Verb: verb, Group: g, Resource: res, Name: name}
							if !slices.Contains(grants, q) {
								grants = append(grants, q)
							}
						}
					}
				}
			}
		}
		fallbacks = append(fallbacks,
			Review{Verb: "escalate", Group: rbacv1.GroupName, Resource: "roles", Name: role.Name},
			Review{Verb: "bind", Group: rbacv1.GroupName, Resource: "roles", Name: role.Name})
	}
	return grants, fallbacks
}

// allReviews are every access question for r.
func allReviews(r *Render) []Review {
	grants, fallbacks := roleReviews(r)
	return append(append(kindReviews(r), grants...), fallbacks...)
}

func (q Review) String() string {
	res := q.Resource
	if q.Group != "" {
		res += "." + q.Group
	}
	if q.Name != "" {
		res += "/" + q.Name
	}
	return q.Verb + " " + res
}

// access: may the identity check runs as (subject nil), or the ServiceAccount of --applied-by,
// apply every kind the render emits (SelfSubjectAccessReview, SubjectAccessReview), and create
// its Roles and RoleBindings, which takes holding their rights or the escalate and bind verbs?
// A question that could not be asked (asking about another subject needs the right to create
// subjectaccessreviews) is Unknown.
func access(r *Render, ns *Namespace, subject *Subject) Result {
	who, key, check := "you", "", "access"
	if subject != nil {
		who, key, check = subject.String(), subject.User(), "access-applied-by"
	}
	res := Result{Check: check, Scope: r.Scope(), File: r.File}
	if ns == nil {
		res.Status, res.Message = Unknown, "cannot tell: the namespace was not read"
		return res
	}
	answer := func(q Review) ReviewResult {
		q.Subject = key
		a, ok := ns.Reviews[q]
		if !ok {
			return ReviewResult{Err: fmt.Errorf("not asked")}
		}
		return a
	}
	var denied, errs []string
	for _, q := range kindReviews(r) {
		switch a := answer(q); {
		case a.Err != nil:
			errs = append(errs, errorOf(q, a.Err, subject))
		case !a.Allowed:
			denied = append(denied, q.String())
		}
	}
	grants, fallbacks := roleReviews(r)
	var missing []string
	for _, q := range grants {
		switch a := answer(q); {
		case a.Err != nil:
			errs = append(errs, errorOf(q, a.Err, subject))
		case !a.Allowed:
			missing = append(missing, q.String())
		}
	}
	if len(missing) > 0 {
		for _, q := range fallbacks {
			switch a := answer(q); {
			case a.Err != nil:
				errs = append(errs, errorOf(q, a.Err, subject))
			case !a.Allowed:
				denied = append(denied, fmt.Sprintf("%s (the keygen Role grants %s, which %s may not do)", q.String(), joinList(missing), who))
			}
		}
	}
	var kinds []string
	for _, q := range kindReviews(r) {
		res := q.Resource
		if q.Group != "" {
			res += "." + q.Group
		}
		if !slices.Contains(kinds, res) {
			kinds = append(kinds, res)
		}
	}
	switch {
	case len(denied) > 0:
		res.Status = Failed
		res.Message = fmt.Sprintf("%s may not %s in namespace %s", who, joinList(denied), r.Namespace)
		if subject == nil {
			res.Fix = "ask for a Role that allows it in the namespace (kubectl auth can-i --list -n " + r.Namespace + " shows what you may do), or apply with an identity that has it"
		} else {
			res.Fix = "bind a Role (or ClusterRole) that allows it to " + subject.String() + " in namespace " + r.Namespace
		}
	case len(errs) > 0:
		res.Status = Unknown
		res.Message = strings.Join(dedupe(errs), "; ")
		if subject != nil {
			res.Fix = "run check with an identity that may create subjectaccessreviews (kubectl auth can-i create subjectaccessreviews), or ask the cluster's administrator"
		}
	default:
		res.Status = Passed
		res.Message = fmt.Sprintf("%s may %s %s in namespace %s", who, joinList(applyVerbs), joinList(kinds), r.Namespace)
		if len(grants) > 0 {
			res.Message += ", and create the keygen Role and RoleBinding"
		}
	}
	return res
}

func errorOf(q Review, err error, subject *Subject) string {
	if subject != nil && apierrors.IsForbidden(err) {
		return cannotTell("create subjectaccessreviews, which asking about "+subject.String()+" takes", err)
	}
	if subject == nil && apierrors.IsForbidden(err) {
		return cannotTell("create selfsubjectaccessreviews", err)
	}
	return cannotTell("ask whether "+q.String()+" is allowed", err)
}

func dedupe(items []string) []string {
	var out []string
	for _, s := range items {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
