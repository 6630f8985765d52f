module.exports = { name: '@hostile/probe' };
