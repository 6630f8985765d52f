module.exports = { name: '@hostile/shadow' };
