// renderCard(json): parse, validate and render one card the way Teams does; report what happened.
// Teams reads TextBlock and FactSet text as markdown, so markdown goes through markdown-it:
// a link an agent wrote would come out as an <a> element here, as it would in Teams.
"use strict";

const markdown = window.markdownit({ html: false, linkify: false, breaks: false });

AdaptiveCards.AdaptiveCard.onProcessMarkdown = (text, result) => {
  result.outputHtml = markdown.render(text);
  result.didProcess = true;
};
AdaptiveCards.GlobalSettings.setTabIndexAtCardRoot = false;
// Teams reads markdown in TextBlock and FactSet text only (by design, its docs say): a
// radio button's or a checkbox's title is plain there, so it is plain here too.
AdaptiveCards.GlobalSettings.useMarkdownInRadioButtonAndCheckbox = false;

// Close to Teams' own (light theme): its fonts, spacings, six actions, colours.
const TEAMS = {
  supportsInteractivity: true,
  choiceSetInputValueSeparator: ",",
  spacing: { small: 8, default: 12, medium: 16, large: 20, extraLarge: 24, padding: 16 },
  separator: { lineThickness: 1, lineColor: "#EEEEEE" },
  fontTypes: {
    default: {
      fontFamily: "'Segoe UI', 'DejaVu Sans', sans-serif",
      fontSizes: { small: 12, default: 14, medium: 14, large: 18, extraLarge: 24 },
      fontWeights: { lighter: 200, default: 400, bolder: 600 },
    },
    monospace: {
      fontFamily: "'Courier New', 'DejaVu Sans Mono', monospace",
      fontSizes: { small: 12, default: 14, medium: 14, large: 18, extraLarge: 24 },
      fontWeights: { lighter: 200, default: 400, bolder: 600 },
    },
  },
  containerStyles: {
    default: {
      backgroundColor: "#ffffff",
      foregroundColors: {
        default: { default: "#252424", subtle: "#bf252424" },
        accent: { default: "#6264a7", subtle: "#8b8cc7" },
        good: { default: "#237b4b", subtle: "#e5237b4b" },
        warning: { default: "#835c00", subtle: "#e5835c00" },
        attention: { default: "#c4314b", subtle: "#e5c4314b" },
      },
    },
    emphasis: { backgroundColor: "#f9f8f7" },
  },
  actions: {
    maxActions: 6,
    spacing: "default",
    buttonSpacing: 8,
    actionsOrientation: "horizontal",
    actionAlignment: "left",
    showCard: { actionMode: "inline", inlineTopMargin: 16 },
  },
  adaptiveCard: { allowCustomStyle: false },
  factSet: {
    title: { weight: "bolder", wrap: true, maxWidth: 150 },
    value: { wrap: true },
    spacing: 16,
  },
  inputs: {
    label: {
      requiredInputs: { weight: "bolder", suffix: " *", suffixColor: "attention" },
      optionalInputs: { weight: "bolder" },
    },
    errorMessage: { size: "small", color: "attention" },
  },
};

function describe(event) {
  return {
    phase: AdaptiveCards.ValidationPhase[event.phase],
    event: AdaptiveCards.ValidationEvent[event.event],
    message: event.message,
  };
}

window.renderCard = (json) => {
  const target = document.getElementById("card");
  target.replaceChildren();
  const card = new AdaptiveCards.AdaptiveCard();
  card.hostConfig = new AdaptiveCards.HostConfig(TEAMS);
  const context = new AdaptiveCards.SerializationContext(new AdaptiveCards.Version(1, 5));
  card.parse(json, context);
  const events = [];
  for (let i = 0; i < context.eventCount; i++) events.push(describe(context.getEventAt(i)));
  for (const event of card.validateProperties().validationEvents) events.push(describe(event));
  const rendered = card.render();
  if (rendered) target.appendChild(rendered);
  const links = Array.from(target.querySelectorAll("a")).map((a) => a.getAttribute("href") || "");
  const labels = Array.from(target.querySelectorAll("label")).map((l) => l.textContent || "");
  return {
    events,
    text: target.innerText,
    html: target.innerHTML,
    links,
    labels,
    inputs: card.getAllInputs().map((input) => input.id),
    height: target.getBoundingClientRect().height,
  };
};
