// Runs a github-script step body (actions/github-script@v7) against an in-memory stand-in for
// GitHub's REST API, so the recipes' comment and digest logic is exercised without GitHub.
// Usage: node github_script_harness.js SCRIPT_FILE STATE_FILE  (state is read, then written back)
const fs = require("fs");
const [scriptFile, stateFile] = process.argv.slice(2);
const state = JSON.parse(fs.readFileSync(stateFile, "utf8"));
const page = (data) => Promise.resolve({ data });
const github = {
  paginate: async (method, params) => (await method(params)).data,
  rest: {
    issues: {
      listComments: () => page(state.comments),
      createComment: ({ body }) => {
        const comment = { id: state.nextId++, body, user: { type: "Bot" } };
        state.comments.push(comment);
        return page(comment);
      },
      updateComment: ({ comment_id, body }) => {
        state.comments.find((c) => c.id === comment_id).body = body;
        return page({});
      },
      deleteComment: ({ comment_id }) => {
        state.comments = state.comments.filter((c) => c.id !== comment_id);
        return page({});
      },
    },
    repos: {
      listPullRequestsAssociatedWithCommit: () => page([{ number: 5, merged_at: "2026-11-22T00:00:00Z" }]),
    },
  },
};
const context = { repo: { owner: "o", repo: "r" }, sha: "abc123", payload: { pull_request: { number: 5 } } };
const core = {
  setOutput: (name, value) => { state.outputs[name] = value; },
  setFailed: (message) => { state.failed = message; },
};
const body = fs.readFileSync(scriptFile, "utf8");
const AsyncFunction = Object.getPrototypeOf(async function () {}).constructor;
new AsyncFunction("require", "github", "context", "core", body)(require, github, context, core)
  .then(() => fs.writeFileSync(stateFile, JSON.stringify(state)))
  .catch((error) => { console.error(error); process.exit(1); });
