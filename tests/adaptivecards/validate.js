// node validate.js < {"name": card, ...}: each card parsed and validated by Microsoft's own
// Adaptive Cards library (version 1.5, as Teams reads it), without drawing it, so a test
// without a browser can still check what a bot sent. Prints {"name": [problem, ...]}.
"use strict";

global.window = global; // the library's bundle looks for its host there
const AdaptiveCards = require("./node_modules/adaptivecards/dist/adaptivecards.js");

const cards = JSON.parse(require("fs").readFileSync(0, "utf8"));
const problems = {};
for (const [name, json] of Object.entries(cards)) {
  const card = new AdaptiveCards.AdaptiveCard();
  const context = new AdaptiveCards.SerializationContext(new AdaptiveCards.Version(1, 5));
  card.parse(json, context);
  const found = [];
  for (let i = 0; i < context.eventCount; i++) found.push(context.getEventAt(i).message);
  for (const event of card.validateProperties().validationEvents) found.push(event.message);
  problems[name] = found;
}
process.stdout.write(JSON.stringify(problems));
