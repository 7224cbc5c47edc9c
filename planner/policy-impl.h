/* policy-impl.h - private to planner/: the learned placement policy's
 * records and the helpers its files share (docs/planner.md, "Learned
 * policy").  The policy is cut by concern, each file using only the ones
 * listed before it:
 *   policy_feat.c   features of op groups and devices
 *   policy_net.c    the network as an hg_graph; the policy and its master copy
 *   policy_task.c   one graph on one cluster: reference, actions, a forward pass
 *   policy_place.c  the placement (greedy, then the policy's moves), MCMC proposals
 *   policy_train.c  REINFORCE with the executor and AdamW; perturbed clusters
 *   policy_file.c   the policy file (HDF5): compiled into hgplan (and
 *                   test_policy), not the library (policy-file.h) */
#ifndef HG_POLICY_IMPL_H
#define HG_POLICY_IMPL_H

#include "planner/hg_planner.h"

#define HG__POL_NLAYERS 2 /* graph attention layers (the file records it) */

/* One instance of the network for G groups and D devices. */
struct hg__pol_net {
    struct hg_graph *g;
    struct hg_exec *ex;
    int nfwd, n;          /* forward nodes (a prefix of the order), all */
    int in_group, in_dev, in_time, in_mem, in_edge, in_mask, in_ref_p, in_ref_a, in_adv_p,
        in_adv_a;
    int place, agg;       /* kept: softmax [G, 2D+2], softmax [G, 2] */
    int loss;
};

struct hg_policy {
    struct hg_policy_cfg cfg;
    long steps;           /* AdamW updates so far */
    struct hg__pol_net tmpl;      /* the network for 2 groups, 2 devices: names, shapes */
    float *params;        /* [nparams] the master copy, the graph's block order */
    float *state;         /* [nstate] AdamW's m and v, the state block order */
    size_t nparams, nstate;
};

struct hg_policy_task {
    const struct hg_pgraph *pg;
    struct hg_strategy *st;   /* the grouping, the reference's order; cfgs are scratch */
    struct hg_policy_feat feat;
    struct hg_sim *sim;
    struct hg__pol_net net;
    double ref;               /* the best baseline's time, seconds */
    double baseline;          /* moving average of the reward */
    int have_baseline;
    struct hg_gcfg dp[2][2];  /* [even, prop][PS, AR] */
    struct hg_gcfg *node_dp;  /* [nnodes][2] even over a node's devices [PS, AR] */
    struct hg_strategy *best; /* the best strategy sampled in training */
    double best_cost;         /* its hg_search_cost; INFINITY: none yet */
    int *ref_act;             /* [G][2] the reference's actions (placement, aggregation
                                 or -1 where model parallel) */
    int *place_act;           /* [G][2] the same of the placement's reference */
    int *imit_act;            /* [G][2] a finetune's imitation target: the reference's
                                 actions, then the best sample's or placement's */
    double imit_reward;       /* its reward */
    int *placed_act;          /* [G][2] the last hg_policy_place's (seconds > 0) */
    int placed_new;           /* placed_act not yet weighed against imit_act */
    int *place_order;         /* [nops] its order */
    float *prob_p, *prob_a;   /* [G][2D+2], [G][2] the last hg_policy_place's
                                 probabilities (hg_policy_propose draws from them) */
};

/* policy_net.c */
/* The network for G groups and D devices into n, resolved, with its executor. */
int hg__pol_net_new(struct hg__pol_net *n, const struct hg_policy_cfg *cfg, int G, int D,
                    char *err, size_t errlen);
void hg__pol_net_free(struct hg__pol_net *n);
/* Where tensor t (PARAM or STATE) of p's template lies in the master copy. */
float *hg__pol_master(const struct hg_policy *p, int t);

/* The largest |weight| a policy may hold (docs/planner.md, "Policy file").
 * Its initial weights are at most about 1 (linear layers uniform in
 * +-1/sqrt(fan in), layer norms 1, the learned scalars 0 or 1), and one
 * AdamW update moves a weight by at most lr (1 - beta1) / sqrt(1 - beta2)
 * = 3.2 lr (Kingma and Ba, 2.1): 0.01 at the default lr of 3e-3, so 1e6
 * is 1e8 updates away, 2500 times the committed pretraining (40000
 * updates in 275 s, largest |weight| 1.19), 8 days at its pace.  A logit that
 * large is also past anything the softmax tells apart in f32 (exp(-1e6)
 * is 0: the probabilities one-hot, the gradients zero), so a weight
 * beyond it is a broken file or a diverged training, never a policy. */
#define HG__POL_MAX_WEIGHT 1e6f
/* 0 where the values x (its numel) of template tensor ti are what a
 * policy can hold: finite, a parameter within +-HG__POL_MAX_WEIGHT,
 * AdamW's exp_avg_sq (a mean of squares, under a square root in the
 * update) not negative.  Else -1 with why "[i] = v: the reason".  AdamW's
 * state has no bound of its own: a large exp_avg_sq only slows its
 * weight, and AdamW keeps |exp_avg| within 7.3 sqrt(exp_avg_sq) (Cauchy-
 * Schwarz, beta1 0.9, beta2 0.999), so an exp_avg far beyond that moves
 * its weight past the bound at the next update, which the training's
 * check names. */
int hg__pol_check_values(const struct hg_tensor_info *ti, const float *x, char *why,
                         size_t whylen);
/* hg__pol_check_values over every parameter and AdamW state tensor of p's
 * template, laid out as p's master copy in params [nparams] and state
 * [nstate] (NULL: p's own).  -1 with err "params/NAME[i] = v: reason" or
 * "optimizer/NAME...", the first found. */
int hg__pol_check(const struct hg_policy *p, const float *params, const float *state,
                  char *err, size_t errlen);

/* policy_task.c */
/* A simulation's reward against the reference's time ref (seconds). */
double hg__pol_reward(const struct hg_sim_result *r, double ref);
/* Group k's cfg for placement action a and aggregation b (mp: scratch). */
const struct hg_gcfg *hg__pol_action_cfg(const struct hg_policy_task *t, int a, int b,
                                         struct hg_gcfg *mp);
/* Group k of t->st to action (a, b). */
void hg__pol_apply_action(struct hg_policy_task *t, int k, int a, int b);
/* t->st set to the actions act[G][2], fully simulated into r where not NULL. */
void hg__pol_set_actions(struct hg_policy_task *t, const int *act, struct hg_sim_result *r);
/* Uniform in [0, 1) from rng; an index of p[n] drawn by its probabilities. */
double hg__pol_urand(uint64_t *rng);
int hg__pol_sample(const float *p, int n, uint64_t *rng);

#endif
