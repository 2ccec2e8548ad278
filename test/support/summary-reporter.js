// Prints one plain closing line, "Tests: N passed, N failed, N skipped", after Jest's own
// summary, so that any tool reading the end of the log can count the tests.
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    process.stdout.write(`\nTests: ${results.numPassedTests} passed, ${results.numFailedTests} failed, ${skipped} skipped\n`);
  }
}
module.exports = SummaryReporter;
